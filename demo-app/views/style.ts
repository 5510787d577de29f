/**
 * The demo's one stylesheet. Served at /assets/demo.css for the demo's own pages (CSP style-src
 * 'self'), and inlined with the response's nonce in the kit's pages, whose CSP allows only that.
 */
export const CSS = `
:root{--bg:#f4f5fa;--card:#fff;--ink:#161b2e;--muted:#5d6578;--line:#e2e5ee;--accent:#4338ca;--accent-hover:#3730a3;
--accent-soft:#eef0ff;--ok:#0b7a4b;--ok-soft:#e4f5ec;--warn:#8a5300;--warn-soft:#fff3d9;--bad:#b42318;--bad-soft:#fdecea;
--radius:14px;--shadow:0 1px 2px rgba(22,27,46,.06),0 8px 24px rgba(22,27,46,.06)}
*{box-sizing:border-box}
html{background:var(--bg)}
body{margin:0;font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink)}
a{color:var(--accent)}
a:hover{color:var(--accent-hover)}
code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f1f2f7;border-radius:6px;padding:.1rem .35rem;word-break:break-all}
.topbar{background:var(--card);border-bottom:1px solid var(--line)}
.topbar-inner{max-width:60rem;margin:0 auto;padding:.8rem 1.25rem;display:flex;align-items:center;gap:1.25rem}
.brand{display:flex;align-items:center;gap:.6rem;font-weight:700;letter-spacing:-.01em;color:var(--ink);text-decoration:none;white-space:nowrap}
.brand:hover{color:var(--ink)}
.logo{width:30px;height:30px;border-radius:9px;background:linear-gradient(135deg,#6366f1,#4338ca);display:grid;place-items:center;color:#fff;font-size:15px}
nav.main{display:flex;gap:.25rem;flex:1}
nav.main a{padding:.4rem .75rem;border-radius:8px;color:var(--muted);text-decoration:none;font-weight:500;white-space:nowrap}
nav.main a:hover{background:var(--bg);color:var(--ink)}
nav.main a[aria-current=page]{background:var(--accent-soft);color:var(--accent)}
.who{display:flex;align-items:center;gap:.75rem;color:var(--muted);font-size:.95rem;white-space:nowrap}
.who form{margin:0}
main{max-width:60rem;margin:0 auto;padding:2rem 1.25rem 4rem}
main.narrow{max-width:34rem}
h1{font-size:1.65rem;line-height:1.25;letter-spacing:-.02em;margin:0 0 .35rem}
h2{font-size:1.1rem;margin:0 0 .25rem}
.lead{color:var(--muted);margin:0 0 1.75rem}
.grid{display:grid;gap:1.25rem;grid-template-columns:repeat(auto-fit,minmax(17rem,1fr))}
.card{background:var(--card);border:1px solid var(--line);border-radius:var(--radius);box-shadow:var(--shadow);padding:1.5rem}
.card p{margin:.4rem 0}
.card .muted,.muted{color:var(--muted)}
.card form{margin-top:1.1rem}
.value{font-size:1.35rem;font-weight:650;letter-spacing:.01em;margin:.5rem 0 .2rem}
.badge{display:inline-flex;align-items:center;gap:.3rem;font-size:.78rem;font-weight:600;padding:.15rem .6rem;border-radius:999px;vertical-align:middle}
.badge.ok{background:var(--ok-soft);color:var(--ok)}
.badge.warn{background:var(--warn-soft);color:var(--warn)}
.badge.info{background:var(--accent-soft);color:var(--accent)}
.card-head{display:flex;justify-content:space-between;align-items:flex-start;gap:1rem}
label{display:block;font-weight:600;font-size:.92rem;margin-bottom:.35rem}
input[type=text]{width:100%;font:inherit;padding:.6rem .75rem;border:1px solid #cdd2df;border-radius:10px;background:#fff;color:var(--ink)}
input[type=text]:focus{outline:3px solid var(--accent-soft);border-color:var(--accent)}
.hint{font-size:.85rem;color:var(--muted);margin:.35rem 0 0}
.btn{display:inline-flex;align-items:center;justify-content:center;gap:.4rem;font:inherit;font-weight:600;padding:.6rem 1.1rem;border-radius:10px;
border:1px solid transparent;background:var(--accent);color:#fff;cursor:pointer;text-decoration:none}
.btn:hover{background:var(--accent-hover);color:#fff}
.btn:focus-visible{outline:3px solid #a5b4fc;outline-offset:2px}
.btn.secondary{background:#fff;color:var(--ink);border-color:#cdd2df}
.btn.secondary:hover{background:var(--bg);color:var(--ink)}
.btn.small{padding:.35rem .8rem;font-size:.9rem}
.btn.block{width:100%;margin-top:.9rem}
.users{display:grid;gap:.9rem}
.user{display:flex;align-items:center;gap:1rem}
.user form{margin:0 0 0 auto}
.avatar{width:44px;height:44px;border-radius:50%;display:grid;place-items:center;font-weight:700;color:var(--accent);background:var(--accent-soft);flex:none}
.user .meta{line-height:1.35}
.user .meta span{display:block;color:var(--muted);font-size:.9rem}
.result{text-align:center;padding:2.5rem 2rem}
.result .icon{width:64px;height:64px;margin:0 auto 1rem;border-radius:50%;display:grid;place-items:center;font-size:30px;font-weight:700}
.result.ok .icon{background:var(--ok-soft);color:var(--ok)}
.result.bad .icon{background:var(--bad-soft);color:var(--bad)}
.result.wait .icon{background:var(--warn-soft);color:var(--warn)}
.result p{color:var(--muted)}
.result .actions{display:flex;gap:.6rem;justify-content:center;flex-wrap:wrap;margin-top:1.5rem}
.result .actions form{margin:0}
dl.facts{display:grid;grid-template-columns:auto 1fr;gap:.35rem 1rem;text-align:left;margin:1.5rem auto 0;max-width:26rem;font-size:.95rem}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;font-weight:600}
table{width:100%;border-collapse:collapse;font-size:.95rem}
th,td{text-align:left;padding:.75rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.78rem;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);font-weight:600}
tr:last-child td{border-bottom:0}
td.when{white-space:nowrap;color:var(--muted)}
td code{white-space:nowrap;word-break:normal}
.empty{text-align:center;color:var(--muted);padding:2rem 0}
.note{margin-top:1.5rem;font-size:.9rem;color:var(--muted)}
.alert{border-radius:10px;padding:.75rem 1rem;margin:0 0 1.25rem;font-size:.95rem}
.alert.bad{background:var(--bad-soft);color:var(--bad)}
/* The operator page: its cards one under another, numbers aligned, the chart shrinks to fit. */
.stack{display:grid;gap:1.25rem}
h3{font-size:1rem;margin:1.5rem 0 .25rem}
th.num,td.num{text-align:right;font-variant-numeric:tabular-nums}
.chart-box{margin:1rem 0}
.chart{display:block;max-width:100%;height:auto}
.legend{display:flex;gap:1.25rem;list-style:none;padding:0;margin:.5rem 0 0;font-size:.9rem;color:var(--muted)}
.swatch{display:inline-block;width:.9rem;height:.9rem;margin-right:.4rem;vertical-align:-.1rem;border:1px solid var(--accent)}
.swatch.unverified{background:var(--accent-soft)}
.swatch.verified{background:var(--accent)}
fieldset{border:0;padding:0;margin:0 0 1rem}
legend{font-weight:600;font-size:.92rem;margin-bottom:.35rem}
label.choice{font-weight:400;margin:.2rem 0}
/* The header reads on one line: its tagline and "Signed in as" are for screen readers only. */
caption.sr-only,.brand small,.who .sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
footer{max-width:60rem;margin:0 auto;padding:0 1.25rem 2rem;color:var(--muted);font-size:.85rem;text-align:center}
/* A tablet or a phone: the brand and the user on the first line, the menu on its own line below. */
@media (max-width:60rem){.topbar-inner{flex-wrap:wrap;gap:.5rem .75rem}.brand{flex:1}nav.main{order:3;flex:0 0 100%;flex-wrap:wrap;margin:0 -.5rem}}
@media (max-width:40rem){.topbar-inner{padding:.6rem 1rem}.who span{display:none}nav.main a{padding:.35rem .5rem}}
`;
