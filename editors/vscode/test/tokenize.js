// Tokenize a file with the extension's TextMate grammars, as VS Code does
// (vscode-textmate + vscode-oniguruma), and print one JSON line per token:
// [line, start, text, scopes]. Usage: node test/tokenize.js FILE [source.plan|text.html.markdown]
const fs = require("fs");
const path = require("path");
const vsctm = require("vscode-textmate");
const oniguruma = require("vscode-oniguruma");

const here = path.join(__dirname, "..");
const wasm = fs.readFileSync(path.join(here, "node_modules", "vscode-oniguruma", "release", "onig.wasm")).buffer;
const grammars = {
  "source.plan": path.join(here, "syntaxes", "plan.tmLanguage.json"),
  "markdown.plan.codeblock": path.join(here, "syntaxes", "plan-markdown.tmLanguage.json"),
};

async function main() {
  await oniguruma.loadWASM(wasm);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) => {
      if (grammars[scopeName]) {
        return vsctm.parseRawGrammar(fs.readFileSync(grammars[scopeName], "utf8"), grammars[scopeName]);
      }
      if (scopeName === "text.html.markdown") {  // a minimal Markdown host for the injection
        return vsctm.parseRawGrammar(JSON.stringify({ scopeName, patterns: [] }), "markdown.json");
      }
      return null;
    },
    getInjections: (scopeName) => (scopeName === "text.html.markdown" ? ["markdown.plan.codeblock"] : []),
  });
  const scope = process.argv[3] || "source.plan";
  const grammar = await registry.loadGrammar(scope);
  const lines = fs.readFileSync(process.argv[2], "utf8").split(/\r?\n/);
  let stack = vsctm.INITIAL;
  const out = [];
  lines.forEach((line, i) => {
    const r = grammar.tokenizeLine(line, stack);
    for (const t of r.tokens) {
      out.push(JSON.stringify([i, t.startIndex, line.slice(t.startIndex, t.endIndex), t.scopes]));
    }
    stack = r.ruleStack;
  });
  process.stdout.write(out.join("\n") + "\n");
}

main().catch((e) => { console.error(e); process.exit(1); });
