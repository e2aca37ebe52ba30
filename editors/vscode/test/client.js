// The extension's client side against `planner lsp`, without VS Code: the server is started
// from the extension's own server options (server.js, as extension.js passes them to
// vscode-languageclient) and spoken to over stdio with vscode-jsonrpc, the protocol library
// vscode-languageclient is built on. Opens FILE, waits for its diagnostics, hovers at LINE:CHAR
// and prints one JSON object: {initialize, diagnostics, hover}.
// Usage: node test/client.js FILE LINE CHAR   (the `planner` command on the PATH)
const cp = require("child_process");
const fs = require("fs");
const path = require("path");
const url = require("url");
const rpc = require("vscode-jsonrpc/node");
const { serverOptions } = require("../server");

async function main() {
  const [file, line, character] = process.argv.slice(2);
  const { command, args } = serverOptions((key, fallback) => fallback).run; // the settings' defaults
  const server = cp.spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
  const connection = rpc.createMessageConnection(
    new rpc.StreamMessageReader(server.stdout), new rpc.StreamMessageWriter(server.stdin));
  const uri = url.pathToFileURL(path.resolve(file)).href;
  const published = new Promise((resolve) => {
    connection.onNotification("textDocument/publishDiagnostics", (params) => {
      if (params.uri === uri) resolve(params.diagnostics);
    });
  });
  connection.listen();
  const init = await connection.sendRequest("initialize", {
    processId: process.pid, rootUri: url.pathToFileURL(path.dirname(path.resolve(file))).href,
    capabilities: { textDocument: { hover: { contentFormat: ["markdown", "plaintext"] } } },
  });
  connection.sendNotification("initialized", {});
  connection.sendNotification("textDocument/didOpen", {
    textDocument: { uri, languageId: "plan", version: 1, text: fs.readFileSync(file, "utf8") },
  });
  const diagnostics = await published;
  const hover = await connection.sendRequest("textDocument/hover", {
    textDocument: { uri }, position: { line: Number(line), character: Number(character) },
  });
  await connection.sendRequest("shutdown");
  connection.sendNotification("exit");
  const code = await new Promise((resolve) => server.on("exit", resolve));
  console.log(JSON.stringify({ initialize: init.serverInfo, diagnostics, hover, exit: code }));
  connection.dispose();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
