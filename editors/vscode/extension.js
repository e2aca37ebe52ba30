// Starts `planner lsp` (stdio) for .plan files; everything else comes from the server.
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");
const { serverOptions, TRANSPORT_STDIO } = require("./server");

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration("planner.server");
  const options = serverOptions((key, fallback) => config.get(key, fallback));
  const { command, args } = options.run;
  if (TransportKind.stdio !== TRANSPORT_STDIO) throw new Error("vscode-languageclient's TransportKind changed");
  client = new LanguageClient(
    "planner",
    "planner",
    options,
    {
      documentSelector: [{ scheme: "file", language: "plan" }, { scheme: "untitled", language: "plan" }],
      synchronize: {
        fileEvents: vscode.workspace.createFileSystemWatcher("**/*.plan"),
        configurationSection: "planner", // `planner.inlayHints` reaches the server as it changes
      },
    }
  );
  context.subscriptions.push({ dispose: () => client && client.stop() });
  return client.start().catch((err) => {
    vscode.window.showErrorMessage(
      `planner: could not start \`${command} ${args.join(" ")}\` (${err.message}). ` +
        "Install it with: pip install planner-units, or set planner.server.command."
    );
  });
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
