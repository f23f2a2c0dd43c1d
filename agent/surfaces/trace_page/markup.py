"""The trace page's style and script, and the escaping every part of it uses.

The page's Content Security Policy admits exactly these two inline blocks, by hash.
"""

from __future__ import annotations

import base64
import hashlib
from html import escape

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;
background:#f6f7fb}
header{background:#23283a;color:#fff;padding:16px 24px}
header h1{font-size:18px;margin:0 0 6px}
header .q{font-size:20px;font-weight:600;margin:4px 0 10px}
header table{border-collapse:collapse}
header td,header th{padding:2px 10px 2px 0;text-align:left;font-weight:normal}
header th{color:#aab0c4}
main{padding:8px 24px 40px;max-width:1400px}
section{background:#fff;border:1px solid #dde1ea;border-radius:8px;margin:16px 0;padding:12px 16px}
h2{font-size:16px;margin:4px 0 10px}
.muted{color:#687089}
details.step{border-left:4px solid #c9cfe0;margin:6px 0;padding:4px 10px;background:#fafbfd}
details.step[open]{border-left-color:#5b6cff}
details.step summary{cursor:pointer;font-weight:600}
details.step .n{display:inline-block;min-width:2.2em;color:#5b6cff}
details.step .node{font-family:ui-monospace,Menlo,Consolas,monospace}
details.step ul{margin:4px 0 4px 18px;padding:0}
.kv{border-collapse:collapse;margin:4px 0}
.kv td,.kv th{padding:1px 10px 1px 0;text-align:left;vertical-align:top}
.kv th{color:#687089;font-weight:normal}
pre{background:#f1f3f8;padding:6px 8px;border-radius:4px;white-space:pre-wrap;
word-break:break-word;margin:4px 0;font-size:12px}
table.ev{border-collapse:collapse;width:100%}
table.ev th,table.ev td{border-bottom:1px solid #e6e9f0;padding:4px 6px;text-align:left;
vertical-align:top}
table.ev th{background:#f1f3f8;position:sticky;top:0}
table.ev td.num{font-variant-numeric:tabular-nums;white-space:nowrap}
table.ev td.why{font-size:12px;white-space:nowrap;color:#3a4356}
table.ev tr.hl{background:#fff4c2}
.src{display:inline-block;margin:1px 4px 1px 0;padding:0 5px;border-radius:3px;font-size:12px;
background:#eef0f6}
.src.semantic{background:#dce8fb}.src.lexical{background:#ece3fb}.src.cue{background:#fbe9d8}
.src.expansion{background:#d9f3e4}.src.root{background:#eadcfb}
.src.counterfactual{background:#ffe6c7}
.edge-semantic{color:#2f6fdb}.edge-structural{color:#1f9d55}.edge-dialogue{color:#0e8f9a}
.edge-causal,.edge-caused_by{color:#d64545}
.anchor{color:#a87900;font-weight:600}
.llm{background:#eef6ff;border:1px solid #c7dcf7;border-radius:4px;padding:4px 8px;margin:4px 0}
.llm.fallback{background:#fff1f0;border-color:#f3c2bd}
svg text{font:12px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
svg .mnode rect{fill:#fff;stroke:#9aa3bb;stroke-width:1.5}
svg .mnode.visited rect{fill:#e8ebff;stroke:#5b6cff;stroke-width:2.5}
svg .mnode text.label{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
svg .badge{fill:#5b6cff}
svg .badge-text{fill:#fff;font-size:11px;font-weight:600}
svg .medge{stroke:#c3c8d6;stroke-width:1.5;fill:none}
svg .medge.taken{stroke:#5b6cff;stroke-width:3}
svg .medge.conditional{stroke-dasharray:5 4}
svg .step-no{fill:#5b6cff;font-size:11px;font-weight:600}
svg .mem{cursor:pointer}
svg .mem text{font-size:11.5px}
svg .mem.hl circle{stroke:#f0b400;stroke-width:4}
.legend span{display:inline-block;margin-right:14px;font-size:12px}
.legend i{display:inline-block;width:18px;height:3px;vertical-align:middle;margin-right:4px}
.legend i.semantic{background:#2f6fdb}.legend i.structural{background:#1f9d55}
.legend i.dialogue{background:#0e8f9a}
.legend i.causal{background:#d64545}.legend i.root{background:#8a4fd8}
.legend i.risk{background:#e07b00}.legend i.query{background:#b8bcc6}
.scroll{overflow-x:auto}
button{font:inherit;margin-right:6px;padding:2px 10px;border:1px solid #b9c0d4;border-radius:4px;
background:#fff;cursor:pointer}
"""

SCRIPT = """
(function () {
  function mark(id) {
    document.querySelectorAll('.hl').forEach(function (e) { e.classList.remove('hl'); });
    document.querySelectorAll('[data-mid="' + id + '"]').forEach(function (e) {
      e.classList.add('hl');
    });
  }
  document.querySelectorAll('svg .mem').forEach(function (node) {
    node.addEventListener('click', function () {
      var id = node.getAttribute('data-mid');
      mark(id);
      var row = document.querySelector('tr[data-mid="' + id + '"]');
      if (row) { row.scrollIntoView({block: 'center'}); }
    });
  });
  document.querySelectorAll('tr[data-mid]').forEach(function (row) {
    row.addEventListener('click', function () { mark(row.getAttribute('data-mid')); });
  });
  function all(open) {
    document.querySelectorAll('details.step').forEach(function (d) { d.open = open; });
  }
  document.getElementById('open-all').addEventListener('click', function () { all(true); });
  document.getElementById('close-all').addEventListener('click', function () { all(false); });
})();
"""


def csp_hash(text: str) -> str:
    """The CSP source that admits exactly this inline block."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def esc(value: object) -> str:
    """Text as HTML, quotes included: no memory can add markup."""
    return escape(str(value), quote=True)


def short(text: str, limit: int) -> str:
    """Whitespace folded and cut to ``limit`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
