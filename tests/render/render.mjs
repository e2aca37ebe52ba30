// Renders planner's Markdown reports the way GitHub does, for the tests and for looking at them.
//
//   node render.mjs check REPORT.md...   every formula through KaTeX (throwOnError) and every
//                                        Mermaid diagram through Mermaid's parser (edge limit
//                                        included); prints one JSON object: {file: [errors]}
//   node render.mjs html REPORT.md       a standalone HTML page (GitHub's Markdown CSS, KaTeX,
//                                        Mermaid) on stdout, for a headless browser's screenshot
//   node render.mjs measure REPORT.md    the same page with a script that, once Mermaid has drawn,
//                                        measures every table, formula and graph and writes the
//                                        widths, the page height and where the findings end as JSON
//                                        into <pre id="measured"> (read with --dump-dom)
//
// Markdown is parsed with markdown-it (CommonMark with GFM tables), so math is found where
// GitHub finds it: $`...`$ around an inline code span, and ```math fenced blocks.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import katex from "katex";
import MarkdownIt from "markdown-it";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

function markdown() {
  return new MarkdownIt({ html: true, linkify: false });
}

// Every piece of math and every diagram, in document order: {kind, tex|source, display, line}
function pieces(text) {
  const md = markdown();
  const found = [];
  const walk = (tokens) => {
    for (const t of tokens) {
      if (t.type === "fence" && t.info.trim() === "math") {
        found.push({ kind: "math", tex: t.content, display: true, line: t.map ? t.map[0] + 1 : 0 });
      } else if (t.type === "fence" && t.info.trim() === "mermaid") {
        found.push({ kind: "mermaid", source: t.content, line: t.map ? t.map[0] + 1 : 0 });
      } else if (t.type === "inline" && t.children) {
        const c = t.children;
        for (let i = 0; i < c.length; i++) {
          if (c[i].type === "code_inline" && i > 0 && i + 1 < c.length
              && c[i - 1].type === "text" && c[i - 1].content.endsWith("$")
              && c[i + 1].type === "text" && c[i + 1].content.startsWith("$")) {
            found.push({ kind: "math", tex: c[i].content, display: false, line: t.map ? t.map[0] + 1 : 0 });
          }
        }
      }
    }
  };
  walk(md.parse(text, {}));
  return found;
}

async function mermaidParser() {
  const { JSDOM } = await import("jsdom");
  const dom = new JSDOM("<!doctype html><html><body></body></html>");
  globalThis.window = dom.window;
  globalThis.document = dom.window.document;
  const { default: mermaid } = await import("mermaid");
  mermaid.initialize({ startOnLoad: false }); // GitHub's defaults: maxEdges 500
  return mermaid;
}

async function check(files) {
  const out = {};
  let mermaid = null;
  for (const file of files) {
    const errors = [];
    for (const p of pieces(readFileSync(file, "utf8"))) {
      if (p.kind === "math") {
        try {
          katex.renderToString(p.tex, { throwOnError: true, displayMode: p.display, strict: "error" });
        } catch (e) {
          errors.push(`line ${p.line}: KaTeX: ${e.message} in: ${p.tex}`);
        }
      } else {
        mermaid ??= await mermaidParser();
        try {
          await mermaid.parse(p.source);
        } catch (e) {
          errors.push(`line ${p.line}: Mermaid: ${String(e.message || e).split("\n")[0]}`);
        }
      }
    }
    out[file] = { errors, math: pieces(readFileSync(file, "utf8")).filter((p) => p.kind === "math").length,
                  diagrams: pieces(readFileSync(file, "utf8")).filter((p) => p.kind === "mermaid").length };
  }
  process.stdout.write(JSON.stringify(out));
}

// Run in the page: the widest things a reader would have to scroll to see, and where the findings end.
const MEASURE = `
function measure() {
  const column = document.querySelector(".markdown-body");
  const inner = column.clientWidth - 64;  // the column's content box (32 px padding each side)
  const left = column.getBoundingClientRect().left + 32;
  // the page as a reader first sees it (folded parts closed), then every part opened to measure it
  const height = document.documentElement.scrollHeight;
  // the findings end where the next section starts (the h2 after the one named Findings)
  const h2 = [...document.querySelectorAll(".markdown-body h2")];
  const at = h2.findIndex((h) => h.textContent.trim() === "Findings");
  const findings = at >= 0 && h2[at + 1] ? Math.round(h2[at + 1].getBoundingClientRect().top + window.scrollY) : null;
  document.querySelectorAll("details").forEach((d) => { d.open = true; });
  const items = [];
  const add = (kind, el, text) => {
    const r = el.getBoundingClientRect();
    items.push({kind, width: Math.max(el.scrollWidth, Math.ceil(r.width)), right: Math.ceil(r.right - left),
                top: Math.round(r.top + window.scrollY), text: (text || el.textContent || "").slice(0, 80)});
  };
  document.querySelectorAll(".markdown-body table").forEach((t) => add("table", t, t.rows[0] && t.rows[0].textContent));
  document.querySelectorAll(".katex-display > .katex, .katex").forEach((k) => {
    if (!k.closest("table") && !k.parentElement.closest(".katex")) add("formula", k, k.querySelector("annotation") && k.querySelector("annotation").textContent);
  });
  document.querySelectorAll("pre.mermaid svg").forEach((g) => add("graph", g, "mermaid"));
  const out = {column: inner, height, findings_bottom: findings, opened_height: document.documentElement.scrollHeight,
               graphs: document.querySelectorAll("pre.mermaid").length, drawn: document.querySelectorAll("pre.mermaid svg").length,
               items};
  const pre = document.createElement("pre");
  pre.id = "measured";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}
window.addEventListener("load", async () => {
  try { await mermaid.run(); } catch (e) { document.body.dataset.mermaidError = String(e); }
  measure();
});
`;

function html(file, measuring = false) {
  const md = markdown();
  const fence = md.renderer.rules.fence;
  md.renderer.rules.fence = (tokens, i, options, env, self) => {
    const t = tokens[i];
    if (t.info.trim() === "math") {
      return katex.renderToString(t.content, { displayMode: true, throwOnError: false });
    }
    if (t.info.trim() === "mermaid") {
      return `<pre class="mermaid">${md.utils.escapeHtml(t.content)}</pre>`;
    }
    return fence(tokens, i, options, env, self);
  };
  const code = md.renderer.rules.code_inline;
  md.renderer.rules.code_inline = (tokens, i, options, env, self) => {
    const prev = tokens[i - 1], next = tokens[i + 1];
    if (prev && next && prev.type === "text" && prev.content.endsWith("$")
        && next.type === "text" && next.content.startsWith("$")) {
      return "\u0000" + katex.renderToString(tokens[i].content, { throwOnError: false }) + "\u0000";
    }
    return code(tokens, i, options, env, self);
  };
  let body = md.render(readFileSync(file, "utf8"));
  body = body.replace(/\$\u0000/g, "").replace(/\u0000\$/g, ""); // the dollars around rendered math
  const css = (p) => readFileSync(require.resolve(p), "utf8");
  const katexCss = css("katex/dist/katex.min.css").replace(/url\(fonts\//g,
    `url(file://${join(dirname(require.resolve("katex/dist/katex.min.css")), "fonts")}/`);
  const mermaidJs = require.resolve("mermaid/dist/mermaid.min.js");
  process.stdout.write(`<!doctype html><html><head><meta charset="utf-8">
<style>${css("github-markdown-css/github-markdown-light.css")}</style><style>${katexCss}</style>
<style>body{margin:0;background:#fff}.markdown-body{box-sizing:border-box;width:${process.env.WIDTH || 900}px;padding:32px}</style>
<script src="file://${mermaidJs}"></script></head>
<body><article class="markdown-body">${body}</article>
${measuring ? `<script>mermaid.initialize({startOnLoad:false});${MEASURE}</script>`
             : "<script>mermaid.initialize({startOnLoad:true});</script>"}</body></html>`);
}

const [mode, ...files] = process.argv.slice(2);
if (mode === "check") await check(files);
else if (mode === "html") html(files[0]);
else if (mode === "measure") html(files[0], true);
else { console.error("usage: node render.mjs check|html|measure FILE..."); process.exit(2); }
