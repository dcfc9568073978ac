import { createHash } from 'node:crypto'

/**
 * The dashboard's one style sheet: system fonts, light and dark from the system's preference,
 * colours with a contrast of at least 4.5:1 on their background (WCAG AA), and a layout that
 * folds to one column on a phone. Status is never told by colour alone: each dot has its word.
 */
const CSS = `
:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --panel: #f6f8fa;
  --link: #0550ae; --accent: #0550ae; --accent-fg: #ffffff;
  --red: #b3261e; --yellow: #8a5a00; --green: #1a7f37; --danger: #b3261e;
  --focus: #0969da;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --fg: #e6edf3; --muted: #9da7b3; --line: #30363d; --panel: #161b22;
    --link: #79c0ff; --accent: #388bfd; --accent-fg: #0d1117;
    --red: #ff7b72; --yellow: #e3b341; --green: #56d364; --danger: #ff7b72;
    --focus: #79c0ff;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
a { color: var(--link); }
:focus-visible { outline: 2px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--bg); padding: .25rem .5rem; z-index: 1; }
header.top { display: flex; flex-wrap: wrap; gap: .5rem 1.25rem; align-items: center;
  padding: .6rem 1.25rem; border-bottom: 1px solid var(--line); background: var(--panel); }
header.top .brand { font-weight: 700; text-decoration: none; color: var(--fg); font-size: 1.1rem; }
header.top nav { display: flex; flex-wrap: wrap; gap: .25rem .9rem; }
header.top nav a { text-decoration: none; padding: .15rem 0; }
header.top nav.admin { padding-left: .9rem; border-left: 1px solid var(--line); }
header.top nav.admin span { padding: .15rem 0; }
header.top nav a[aria-current="page"] { font-weight: 600; border-bottom: 2px solid var(--accent); }
header.top .who { margin-left: auto; display: flex; gap: .6rem; align-items: center; color: var(--muted); }
main { padding: 1rem 1.25rem 3rem; max-width: 78rem; margin: 0 auto; }
h1 { font-size: 1.45rem; margin: .4rem 0 1rem; word-break: break-all; }
h2 { font-size: 1.1rem; margin: 1.6rem 0 .6rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: .85rem; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
.muted { color: var(--muted); }
.provenance { display: block; font-size: .85em; overflow-wrap: anywhere; }
.status { display: inline-flex; align-items: center; gap: .35rem; font-weight: 600; }
.status::before { content: ""; width: .7rem; height: .7rem; border-radius: 50%; background: currentColor; }
.status.red { color: var(--red); } .status.yellow { color: var(--yellow); } .status.green { color: var(--green); }
.badge { display: inline-block; padding: 0 .45rem; border: 1px solid var(--line); border-radius: 1rem;
  font-size: .8rem; color: var(--muted); white-space: nowrap; }
.badge.locked { border-color: var(--yellow); color: var(--yellow); }
.badge.stale { border-color: var(--red); color: var(--red); }
form.inline { display: inline; }
fieldset { border: 1px solid var(--line); border-radius: .5rem; margin: 0 0 1rem; }
label.check { flex-direction: row; align-items: center; gap: .35rem; color: var(--fg); }
details summary { cursor: pointer; color: var(--link); }
.filters { display: flex; flex-wrap: wrap; gap: .6rem; align-items: end; margin-bottom: 1rem; }
label { display: flex; flex-direction: column; gap: .2rem; font-size: .85rem; color: var(--muted); }
input, select, textarea { font: inherit; color: var(--fg); background: var(--bg);
  border: 1px solid var(--line); border-radius: .35rem; padding: .35rem .5rem; }
button, .button { font: inherit; border-radius: .35rem; padding: .35rem .8rem; cursor: pointer;
  border: 1px solid var(--accent); background: var(--accent); color: var(--accent-fg); text-decoration: none;
  display: inline-block; }
button.secondary, .button.secondary { background: transparent; color: var(--link); }
button.danger, .button.danger { background: var(--danger); border-color: var(--danger); color: var(--bg); }
.panel { border: 1px solid var(--line); border-radius: .5rem; padding: .8rem 1rem; background: var(--panel); }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(15rem, 1fr)); gap: .8rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; word-break: break-all; }
.notice { border-left: 4px solid var(--green); padding: .5rem .8rem; background: var(--panel); margin-bottom: 1rem; }
.notice.error { border-color: var(--red); }
.secret { font-family: ui-monospace, monospace; word-break: break-all; padding: .6rem; border: 1px dashed var(--line); }
.pager { display: flex; gap: 1rem; margin-top: 1rem; }
.diff-add { color: var(--green); } .diff-remove { color: var(--red); } .diff-change { color: var(--yellow); }
ul.diff { list-style: none; padding-left: 0; } ul.diff ul { list-style: none; padding-left: 1.5rem; }
ul.diff li { margin: .15rem 0; word-break: break-all; }
.badge.ok { border-color: var(--green); color: var(--green); }
.badge.pending { border-color: var(--red); color: var(--red); }
.badge.run-succeeded { border-color: var(--green); color: var(--green); }
.badge.run-failed { border-color: var(--red); color: var(--red); }
.badge.run-running, .badge.run-queued { border-color: var(--yellow); color: var(--yellow); }
pre.log { overflow-x: auto; max-height: 70vh; padding: .6rem; border: 1px solid var(--line); border-radius: .5rem; font-size: .85rem; white-space: pre-wrap; word-break: break-all; }
svg.graph { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: .5rem; background: var(--panel); }
svg.graph text { fill: var(--fg); font: 12px system-ui, sans-serif; }
svg.graph .edge { stroke: var(--muted); fill: none; stroke-width: 1.5; }
svg.graph .edge.pending { stroke: var(--yellow); stroke-dasharray: 5 3; }
svg.graph .node rect { fill: var(--bg); stroke-width: 2; }
svg.graph .node.red rect { stroke: var(--red); } svg.graph .node.yellow rect { stroke: var(--yellow); }
svg.graph .node.green rect { stroke: var(--green); } svg.graph .node.hidden rect { stroke: var(--line); }
svg.graph .node.focus rect { stroke-width: 4; }
svg.graph .node.missing rect { stroke: var(--muted); stroke-dasharray: 4 3; }
svg.graph .node.red .word { fill: var(--red); } svg.graph .node.yellow .word { fill: var(--yellow); }
svg.graph .node.green .word { fill: var(--green); }
svg.graph .node.hidden text, svg.graph .node.missing .word, svg.graph text.heading { fill: var(--muted); }
svg.graph a:hover rect, svg.graph a:focus rect { fill: var(--panel); }
svg.graph .arrow { fill: var(--muted); } svg.graph .arrow.pending { fill: var(--yellow); }
svg.graph .edge.unknown { stroke-dasharray: 2 3; }
ul.reasons { margin: 0; padding-left: 1.1rem; }
@media (max-width: 40rem) {
  main { padding: .75rem; }
  header.top .who { margin-left: 0; width: 100%; }
  header.top nav.admin { padding-left: 0; border-left: 0; }
  table.stack thead { display: none; }
  table.stack tr { display: block; border-bottom: 1px solid var(--line); padding: .4rem 0; }
  table.stack td { display: flex; justify-content: space-between; border: 0; padding: .15rem .25rem; }
  table.stack td::before { content: attr(data-label); color: var(--muted); margin-right: 1rem; }
}
`

/**
 * The dashboard's client code: progressive, every page works without it. A button with
 * `data-copy` copies the text of the element it names.
 */
const JS = `
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-copy]') : null
  if (button === null) return
  const source = document.getElementById(button.getAttribute('data-copy'))
  if (source === null || navigator.clipboard === undefined) return
  navigator.clipboard.writeText(source.textContent.trim()).then(() => {
    button.textContent = 'Copied'
  })
})
`

export interface Asset {
  path: string
  type: string
  body: string
}

/** Each asset's path carries the hash of its content, so it can be cached for a year. */
function asset(name: string, extension: string, type: string, body: string): Asset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12)
  return { path: `/app/assets/${name}.${hash}.${extension}`, type, body }
}

/** The tab's icon: three stones, one on another. */
const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<ellipse cx="16" cy="26" rx="13" ry="5" fill="#57606a"/>
<ellipse cx="16" cy="17" rx="9" ry="4.5" fill="#8c959f"/>
<ellipse cx="16" cy="9" rx="5.5" ry="3.5" fill="#0969da"/>
</svg>
`

export const STYLE = asset('app', 'css', 'text/css; charset=utf-8', CSS)
export const ICON_ASSET = asset('icon', 'svg', 'image/svg+xml', ICON)
export const SCRIPT = asset('app', 'js', 'text/javascript; charset=utf-8', JS)
export const ASSETS: readonly Asset[] = [STYLE, SCRIPT, ICON_ASSET]
