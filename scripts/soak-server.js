// The `agentbus mcp` that scripts/bench-soak.js starts: the same code as the
// shipped command, but from tsc's output in dist/ instead of the bundle in
// dist/bundle/, because soak-probe.js watches the server by patching its
// modules (the wasm driver's connection, Database, the wasm runtime), and a
// bundle carries private copies of those that an --import'ed probe cannot
// reach; the probe would count nothing and load a second wasm runtime.
//   node --import scripts/soak-probe.js scripts/soak-server.js mcp
const { runFromProcess } = await import('../dist/src/cli/main.js');
await runFromProcess();
