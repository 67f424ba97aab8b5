-- Headless Neovim (0.7+) as a real memls client; driven by tests/e2e/test_neovim.py.
--
--   nvim --headless --clean -c "luafile tests/e2e/nvim_client.lua"
--
-- Inputs (environment): MEMLS_E2E_PYTHON (the interpreter that runs `-m memls`),
-- MEMLS_E2E_DATA (the data dir), MEMLS_E2E_ROOT (the workspace folder), MEMLS_E2E_OUT (where
-- the JSON report goes), MEMLS_E2E_TIMEOUT_MS (per wait, default 60000),
-- MEMLS_E2E_DIAG_TIMEOUT_MS (the wait for diagnostics, default the same), MEMLS_E2E_APPEND (a
-- line typed at the end of the buffer after the requests: sent to the server as didChange).
-- Only APIs that exist in Neovim 0.7: vim.lsp.start_client, buf_attach_client,
-- client.request_sync, vim.diagnostic.get (not vim.lsp.start / get_clients / nvim -l).

local out_path = vim.env.MEMLS_E2E_OUT
local timeout = tonumber(vim.env.MEMLS_E2E_TIMEOUT_MS or "60000")
local diag_timeout = tonumber(vim.env.MEMLS_E2E_DIAG_TIMEOUT_MS or tostring(timeout))
local report = { steps = {}, nvim = tostring(vim.version().major) .. "." ..
  tostring(vim.version().minor) .. "." .. tostring(vim.version().patch) }

local function step(name)
  table.insert(report.steps, name)
end

local function finish()
  vim.fn.writefile({ vim.fn.json_encode(report) }, out_path)
  vim.cmd("qa!")
end

local function run()
  local python = assert(vim.env.MEMLS_E2E_PYTHON, "MEMLS_E2E_PYTHON is not set")
  local data_dir = assert(vim.env.MEMLS_E2E_DATA, "MEMLS_E2E_DATA is not set")
  local root = assert(vim.env.MEMLS_E2E_ROOT, "MEMLS_E2E_ROOT is not set")
  local root_uri = vim.uri_from_fname(root)

  local initialized = false
  local exited = nil
  local client_id = vim.lsp.start_client({
    name = "memls",
    cmd = { python, "-m", "memls", "serve", "--stdio" },
    cmd_env = { MEMLS_DATA_DIR = data_dir },
    root_dir = root,
    workspace_folders = { { uri = root_uri, name = vim.fn.fnamemodify(root, ":t") } },
    on_init = function() initialized = true end,
    on_exit = function(code, signal) exited = { code = code, signal = signal } end,
  })
  assert(client_id, "vim.lsp.start_client returned nil")
  step("started")

  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/AGENTS.md"))
  local buf = vim.api.nvim_get_current_buf()
  assert(vim.lsp.buf_attach_client(buf, client_id), "buf_attach_client failed")
  step("attached")

  if not vim.wait(timeout, function() return initialized or exited ~= nil end, 50) then
    error("the server did not initialize within " .. timeout .. " ms")
  end
  if exited ~= nil then
    error("the server exited during start-up: " .. vim.inspect(exited))
  end
  local client = vim.lsp.get_client_by_id(client_id)
  report.root_uri = root_uri
  step("initialized")

  local stored, err = client.request_sync("memory/store",
    { text = "Releases are cut from the main branch every Friday", type = "decision" },
    timeout, buf)
  if not stored then error("memory/store: " .. tostring(err)) end
  if stored.err then error("memory/store: " .. vim.inspect(stored.err)) end
  report.store = stored.result
  step("stored")

  local found, qerr = client.request_sync("memory/query",
    { query = "which branch are releases cut from", k = 5 }, timeout, buf)
  if not found then error("memory/query: " .. tostring(qerr)) end
  if found.err then error("memory/query: " .. vim.inspect(found.err)) end
  report.query = found.result
  step("queried")

  local append = vim.env.MEMLS_E2E_APPEND
  if append ~= nil and append ~= "" then
    -- first the note as it is on disk must be indexed, so the typed line is the newer one
    local note_uri = vim.uri_from_bufnr(buf)
    local function note_indexed()
      local listed = client.request_sync("memory/list", { limit = 1000 }, timeout, buf)
      for _, m in ipairs((listed and listed.result and listed.result.memories) or {}) do
        if m.sourceUri == note_uri then return true end
      end
      return false
    end
    local deadline = vim.loop.now() + timeout
    while not note_indexed() do
      if vim.loop.now() > deadline then
        error("the note was not indexed within " .. timeout .. " ms")
      end
      vim.wait(200)
      vim.loop.update_time()
    end
    -- an edit in the buffer (not on disk): Neovim sends textDocument/didChange
    vim.api.nvim_buf_set_lines(buf, -1, -1, false, { append })
    step("edited")
  end

  local function memls_diagnostics()
    local mine = {}
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.source == "memls" then table.insert(mine, d) end
    end
    return mine
  end
  -- both contradicting lines carry a diagnostic (one per side of the conflict)
  local waited = vim.loop.hrtime()
  vim.wait(diag_timeout, function() return #memls_diagnostics() >= 2 end, 100)
  report.diagnostics_wait_ms = (vim.loop.hrtime() - waited) / 1e6
  report.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(report.diagnostics, {
      lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, message = d.message,
      source = d.source or vim.NIL, severity = d.severity,
      severity_name = vim.diagnostic.severity[d.severity] or vim.NIL,
    })
  end
  report.buffer_lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  step("diagnostics")

  client.stop()
  vim.wait(timeout, function() return exited ~= nil end, 50)  -- a bound on a hang: the shutdown of a loaded machine can take seconds
  report.exit = exited or vim.NIL
  step("stopped")
end

local ok, err = xpcall(run, debug.traceback)
report.ok = ok
if not ok then report.error = tostring(err) end
finish()
