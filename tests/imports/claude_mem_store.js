// Makes a claude-mem store through claude-mem's own database module (its SessionStore, as its
// worker uses it), run by Bun: `bun claude_mem_store.js PACKAGE DB SPEC.json`. SPEC is a list of
// sessions: {content, memory, project, prompt, observations: [{at, ...observation}],
// summaries: [{at, ...summary}], adoptedInto}. `adoptedInto` files the session's rows under
// another project as claude-mem's worktree adoption does (its merged_into_project UPDATE).
// Prints the ids claude-mem gave, as JSON.
const [pkg, dbPath, specPath] = process.argv.slice(2);
const { SessionStore } = require(`${pkg}/plugin/sqlite/SessionStore.js`);
const spec = JSON.parse(require("fs").readFileSync(specPath, "utf-8"));
const store = new SessionStore(dbPath);
const ids = {};
for (const session of spec) {
  const id = store.createSDKSession(session.content, session.project, session.prompt);
  store.updateMemorySessionId(id, session.memory);
  ids[session.memory] = { observations: [], summaries: [] };
  (session.observations || []).forEach((obs, i) => {
    const { at, ...fields } = obs;
    const done = store.storeObservation(session.memory, session.project, fields, i + 1, 0, Date.parse(at));
    ids[session.memory].observations.push(done.id);
  });
  (session.summaries || []).forEach((summary, i) => {
    const { at, ...fields } = summary;
    const done = store.storeSummary(session.memory, session.project, fields, i + 1, 0, Date.parse(at));
    ids[session.memory].summaries.push(done.id);
  });
  if (session.adoptedInto) {
    for (const table of ["observations", "session_summaries"]) {
      store.db.prepare(`UPDATE ${table} SET merged_into_project = ? WHERE memory_session_id = ?`)
        .run(session.adoptedInto, session.memory);
    }
  }
  store.markSessionCompleted(id);
}
store.close();
console.log(JSON.stringify(ids));
