// How the extension starts `planner lsp`: the settings `planner.server.command` and
// `planner.server.args`, over stdio. Apart from extension.js (which needs VS Code) so that
// test/client.js starts the server exactly as the extension does.
const TRANSPORT_STDIO = 0; // vscode-languageclient's TransportKind.stdio

function serverOptions(get) {
  const command = get("command", "planner");
  const args = get("args", ["lsp"]);
  const server = { command, args, transport: TRANSPORT_STDIO };
  return { run: server, debug: server };
}

module.exports = { serverOptions, TRANSPORT_STDIO };
