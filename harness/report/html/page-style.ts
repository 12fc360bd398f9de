// The report page's stylesheet (inlined; the page loads nothing).
export const PAGE_STYLE = `
:root { --pass: #1a7f37; --fail: #cf222e; --skip: #8c959f; --error: #bc4c00; --missing: #8250df; --corrupt: #82071e; --line: #d0d7de; --dim: #57606a; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; padding: 0 20px 40px; max-width: 1280px; color: #1f2328; }
h1 { font-size: 22px; margin: 16px 0 4px; } h2 { font-size: 18px; margin: 24px 0 8px; } h4 { margin: 16px 0 6px; font-size: 14px; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
.meta, .dim { color: var(--dim); }
.badge { display: inline-block; padding: 0 6px; border-radius: 10px; color: #fff; font-size: 12px; font-weight: 600; }
.badge.v-pass { background: var(--pass); } .badge.v-fail { background: var(--fail); } .badge.v-skip { background: var(--skip); }
.badge.v-error { background: var(--error); } .badge.v-missing { background: var(--missing); } .badge.v-corrupt { background: var(--corrupt); }
table { border-collapse: collapse; } th, td { border: 1px solid var(--line); padding: 2px 6px; text-align: left; vertical-align: top; }
thead th { background: #f6f8fa; }
table.matrix td { text-align: center; min-width: 64px; font-weight: 600; }
table.matrix td a { display: block; color: inherit; text-decoration: none; }
table.matrix td.v-pass { background: #dafbe1; color: var(--pass); } table.matrix td.v-fail { background: #ffebe9; color: var(--fail); }
table.matrix td.v-skip { background: #f6f8fa; color: var(--skip); font-weight: 400; } table.matrix td.v-error { background: #fff1e5; color: var(--error); }
table.matrix td.v-missing { background: #fbefff; color: var(--missing); } table.matrix td.none { color: var(--line); }
table.matrix td.v-corrupt { background: var(--corrupt); color: #fff; }
table.matrix tbody th { font-weight: 500; white-space: nowrap; }
table.matrix td[data-controls] > a::after, table.matrix td[data-controls]:not(:has(a))::after { content: " \\2691"; font-weight: 400; }
.ctl { font-weight: 400; font-size: 11px; color: var(--skip); } p.controls { font-weight: 600; }
.run { margin: 4px 0; border: 1px solid var(--line); border-radius: 6px; }
.run.line { padding: 3px 10px; color: var(--dim); }
details.run > summary { padding: 4px 10px; cursor: pointer; }
details.run[open] > summary { background: #f6f8fa; border-bottom: 1px solid var(--line); }
details.run.v-fail { border-color: var(--fail); } details.run.v-error { border-color: var(--error); } details.run.v-missing { border-color: var(--missing); }
details.run.v-corrupt { border: 2px solid var(--corrupt); }
.reason { color: var(--dim); }
.body { padding: 4px 12px 12px; }
.problems { color: var(--missing); }
table.expectations { width: 100%; } table.expectations td:nth-child(2) { min-width: 280px; width: 40%; }
table.expectations td.mono { overflow-wrap: anywhere; }
tr.bad td { background: #ffebe9; } td.ok { color: var(--pass); font-weight: 700; } td.no { color: var(--fail); font-weight: 700; }
pre.excerpt { background: #f6f8fa; border: 1px solid var(--line); padding: 6px; overflow-x: auto; margin: 0; }
pre.excerpt .at { background: #fff8c5; display: inline-block; min-width: 100%; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(230px, 1fr)); gap: 0 16px; }
.grid div { border-bottom: 1px dotted var(--line); } .grid span { color: var(--dim); }
.tables { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
.chart { margin: 6px 0; min-height: 40px; }
.note { color: var(--dim); font-size: 12px; margin: 2px 0; }
`;
