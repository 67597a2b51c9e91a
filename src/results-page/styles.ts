import { createHash } from "node:crypto";

/**
 * The page's only stylesheet, inlined. The CSP allows exactly this text by its hash, so nothing
 * an integration sends can add styles (there are no style attributes anywhere on the page).
 */
export const STYLES = `
:root{color-scheme:light;--fg:#1d2939;--muted:#667085;--line:#d0d5dd;--bg:#f9fafb;--card:#fff;--link:#175cd3}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg)}
header.top{display:flex;align-items:center;justify-content:space-between;gap:1rem;padding:.75rem 1.5rem;background:#101828;color:#fff}
header.top a{color:#fff;text-decoration:none;font-weight:600}
header.top form{margin:0}
header.top button{background:transparent;color:#fff;border:1px solid #667085;border-radius:4px;padding:.2rem .6rem;font:inherit;cursor:pointer}
main{max-width:72rem;margin:0 auto;padding:1.5rem}
h1{font-size:1.5rem;margin:0 0 .25rem}
h2{font-size:1.2rem;margin:0}
h3{font-size:1.05rem;margin:0}
a{color:var(--link)}
.muted{color:var(--muted)}
.run-meta{margin:0 0 1rem;color:var(--muted)}
.run-meta span+span::before{content:" · "}
code,.mono{font-family:"DejaVu Sans Mono",ui-monospace,monospace;font-size:.9em}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1rem 1.25rem;margin:0 0 1.25rem}
.stage-head,.result-head{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem}
.result{border-top:1px solid var(--line);padding-top:1rem;margin-top:1rem}
.times{display:flex;flex-wrap:wrap;gap:.25rem 1.25rem;margin:.5rem 0 0;padding:0;list-style:none;font-size:.85rem;color:var(--muted)}
.badge{display:inline-block;border-radius:999px;padding:0 .6rem;font-size:.8rem;font-weight:600;line-height:1.6;border:1px solid transparent;text-transform:lowercase}
.status-passed{background:#ecfdf3;color:#067647;border-color:#abefc6}
.status-failed,.status-errored{background:#fef3f2;color:#b42318;border-color:#fecdca}
.status-running{background:#eff8ff;color:#175cd3;border-color:#b2ddff}
.status-awaiting_override,.status-unreachable{background:#fffaeb;color:#93370d;border-color:#fedf89}
.status-pending,.status-canceled{background:#f2f4f7;color:#344054;border-color:#d0d5dd}
.level-mandatory{background:#101828;color:#fff}
.level-advisory{background:#fff;color:#344054;border-color:#98a2b3}
.message{margin:.5rem 0}
.filters{display:flex;flex-wrap:wrap;align-items:end;gap:.75rem}
.filters a{align-self:center}
.filters label{display:flex;flex-direction:column;font-size:.85rem;font-weight:600}
select,input[type=text],input[type=password]{font:inherit;padding:.3rem .5rem;border:1px solid var(--line);border-radius:4px;background:#fff;min-width:12rem}
button.primary{font:inherit;font-weight:600;padding:.35rem 1rem;border-radius:4px;border:1px solid #175cd3;background:#175cd3;color:#fff;cursor:pointer}
table{width:100%;border-collapse:collapse;margin-top:.75rem;font-size:.9rem}
caption{text-align:left;font-size:.85rem;color:var(--muted);padding-bottom:.25rem}
th,td{text-align:left;vertical-align:top;padding:.45rem .5rem;border-bottom:1px solid var(--line)}
th{background:#f2f4f7;font-size:.8rem;text-transform:uppercase;letter-spacing:.03em;color:#475467}
td.description{min-width:18rem;overflow-wrap:anywhere}
td.link{white-space:nowrap}
table.outcomes th:nth-child(1),table.outcomes th:nth-child(2){width:9rem}
table.outcomes th:nth-child(4){width:16rem}
table.outcomes th:nth-child(5){width:7rem}
.outcome-id{display:block;font-size:.8rem;color:var(--muted)}
.tag{display:inline-flex;align-items:center;gap:.25rem;border-radius:4px;padding:0 .4rem;margin:0 .25rem .25rem 0;font-size:.8rem;font-weight:600;line-height:1.7;border:1px solid;white-space:nowrap}
.tag svg{width:.9rem;height:.9rem;flex:none}
.tag-error{background:#fef3f2;color:#b42318;border-color:#f97066}
.tag-warning{background:#fffaeb;color:#93370d;border-color:#fdb022}
.tag-info{background:#eff8ff;color:#175cd3;border-color:#53b1fd}
.tag-none{background:#fff;color:#344054;border-color:#d0d5dd;font-weight:500}
.tag-group{display:block}
.tag-key{font-size:.75rem;color:var(--muted);margin-right:.25rem}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
details{margin-top:.35rem}
summary{cursor:pointer;color:var(--link);font-size:.85rem}
.markdown{border-left:3px solid var(--line);padding:.1rem .75rem;margin-top:.35rem;overflow-wrap:anywhere}
.markdown pre{background:#f2f4f7;padding:.5rem;overflow:auto}
.markdown table{width:auto}
.empty{color:var(--muted);font-style:italic}
.not-reached{color:var(--muted);margin:.25rem 0}
.notice{background:#fffaeb;border:1px solid #fedf89;border-radius:6px;padding:.5rem .75rem}
.error-text{color:#b42318;font-weight:600}
.login{max-width:28rem}
.verdict{font-weight:600;border:1px solid;border-radius:6px;padding:.5rem .75rem;margin:0 0 1rem}
.run-list td{vertical-align:middle}
.run-list .badge{margin-right:.25rem}
.pager{display:flex;gap:1rem;align-items:center;margin-top:.75rem}
.delivery{margin:.5rem 0}
.delivery-state{font-weight:600;border:1px solid;border-radius:6px;padding:.4rem .75rem;margin:.5rem 0}
.status-retrying,.status-failing{background:#fffaeb;color:#93370d;border-color:#fdb022}
form.retry{margin:.25rem 0 .5rem}
table.attempts th:nth-child(1){width:5rem}
table.attempts th:nth-child(2){width:12rem}
table.attempts th:nth-child(3){width:5rem}
td.answer{overflow-wrap:anywhere}
pre.excerpt{margin:0;padding:.4rem .5rem;background:#f2f4f7;border-radius:4px;white-space:pre-wrap;overflow-wrap:anywhere;max-height:16rem;overflow:auto;font-size:.85em}
.failing{display:inline-block;margin-top:.25rem}
.failing-names{font-size:.8rem;color:#93370d}
.login form{display:flex;flex-direction:column;gap:.75rem}
.login label{display:flex;flex-direction:column;font-weight:600;gap:.25rem}
`.trim();

/** `'sha256-…'` source expression of {@link STYLES} for `style-src`. */
export const STYLES_HASH = `'sha256-${createHash("sha256").update(STYLES, "utf8").digest("base64")}'`;
