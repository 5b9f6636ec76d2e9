"""The pages of the web table as Jinja templates (autoescaped: every name and message is text).

Plain HTML forms and links: a move is a button of a form, a replay step is a link, so every page
works without scripts (the Content-Security-Policy runs none) and a browser's back button or
reload never changes a game (a move names the decision it was made at; a stale one is refused, and
every move, refused or not, answers with a redirect to the page, so a reload never sends it again).
"""

from __future__ import annotations

STYLE = """
body { font-family: system-ui, sans-serif; margin: 0; background: #f4f1ea; color: #1a1d21; }
header { background: #10281c; color: #ecf0e8; padding: 10px 20px; }
header a { color: #ecf0e8; margin-right: 16px; text-decoration: none; font-weight: 600; }
main { padding: 12px 20px; max-width: 1600px; }
h1 { font-size: 22px; margin: 6px 0; }
h2 { font-size: 17px; margin: 10px 0 4px; }
/* The play page: the picture at the left, no taller than the window, and the decision at the top
   of the column beside it, so that every game's moves are in view without scrolling. */
.cols { display: flex; gap: 16px; align-items: flex-start; }
.picture-box { flex: 0 1 auto; min-width: 0; max-width: 62%; }
.table-picture { display: block; max-width: 100%; max-height: calc(100vh - 110px); height: auto;
                 border-radius: 8px; box-shadow: 0 1px 4px #0004; }
.side { flex: 1 1 340px; min-width: 300px; }
pre { background: #fff; padding: 8px; border-radius: 6px; font-size: 13px;
      white-space: pre-wrap; overflow-wrap: anywhere; }  /* wrapped, never clipped */
.moves { max-height: 45vh; overflow-y: auto; }
.moves button { margin: 3px; padding: 6px 10px; font-size: 14px; cursor: pointer; }
.games { display: flex; flex-wrap: wrap; gap: 12px; }
.games form { background: #fff; border-radius: 8px; padding: 8px 14px; box-shadow: 0 1px 3px #0002; }
/* A phone: one column, and the picture at its own size in a box that scrolls sideways (shrunk to
   the phone's width its card labels would be a few pixels high). */
@media (max-width: 760px) {
  main { padding: 8px; }
  .cols { flex-direction: column; }
  .picture-box { max-width: 100%; overflow-x: auto; }
  .table-picture { max-height: none; max-width: none; }
  .side { min-width: 0; width: 100%; }
}
.error { background: #fde2e2; border: 1px solid #f87171; padding: 10px; border-radius: 6px; }
.result { background: #dcfce7; border: 1px solid #22c55e; padding: 10px; border-radius: 6px; }
.told-box { max-height: 320px; overflow-y: auto; display: flex; flex-direction: column-reverse;
            background: #fff; border-radius: 6px; }  /* scrolled to the newest line */
ol.told { margin: 0; padding: 8px 8px 8px 36px; font-size: 13px; }
table.rows { border-collapse: collapse; }
table.rows td, table.rows th { border: 1px solid #ccc; padding: 3px 8px; font-size: 14px; }
.report table { border-collapse: collapse; margin: 8px 0; }
.report td, .report th { border: 1px solid #ccc; padding: 3px 8px; }
.report img { max-width: 100%; }
label { display: block; margin: 6px 0; }
nav.steps a { margin-right: 10px; }
"""

TEMPLATES = {
    "base.html": """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{{ title }} - fowlplay</title>
<style>{{ style }}</style></head>
<body><header><a href="/">fowlplay</a><a href="/#play">play</a><a href="/#runs">replays and results</a></header>
<main>{% block main %}{% endblock %}</main></body></html>""",
    "error.html": """{% extends "base.html" %}{% block main %}
<h1>{{ title }}</h1><p class="error" id="error">{{ message }}</p>
<p><a href="{{ back }}">back</a></p>{% endblock %}""",
    "index.html": """{% extends "base.html" %}{% block main %}
<h1 id="play">Play a game</h1>
<p>The other seats take one agent spec for all, or one per seat: zoo (the game's trained agent of the model zoo), baseline, random, ismcts:N
(N up to {{ max_budget }}), probe:NAME, or ckpt:PATH (a checkpoint inside the runs folder). No seed
deals a fresh random game (its seed is shown when it ends).</p>
<div class="games">{% for g in games %}
<form method="post" action="/play" id="new-{{ g.name }}"><h2>{{ g.name }}</h2>
<input type="hidden" name="game" value="{{ g.name }}">
<label>players <select name="players">{% for n in g.counts %}<option{% if n == g.default %} selected{% endif %}>{{ n }}</option>{% endfor %}</select></label>
<label>your seat (0 moves first) <select name="seat">{% for s in g.seats %}<option>{{ s }}</option>{% endfor %}</select></label>
<label>the other seats <input name="opponents" value="zoo" size="28"></label>
<label>seed (empty: a fresh deal) <input name="seed" value="" size="10"></label>
<label>rule options (KEY=VALUE ...) <input name="options" value="" size="28"></label>
<button type="submit" class="start">start {{ g.name }}</button>
</form>{% endfor %}</div>
<h1 id="runs">Runs in {{ root }}</h1>
{% if runs %}<table class="rows"><tr><th>run</th><th></th><th></th></tr>
{% for r in runs %}<tr><td>{{ r.name }}</td>
<td>{% if r.report %}<a href="/results?run={{ r.name|urlencode }}">results</a>{% endif %}</td>
<td>{% if r.games %}<a href="/replay?run={{ r.name|urlencode }}">replay a game</a>{% endif %}</td></tr>{% endfor %}
</table>{% else %}<p>No evaluation or league found under {{ root }} (fowlplay-eval --out {{ root }}/NAME writes one).</p>{% endif %}
{% endblock %}""",
    "play.html": """{% extends "base.html" %}{% block main %}
<h1>{{ t.game }}: you are {{ t.seat }}</h1>
<p>seats: {{ t.seats|join(", ") }}; decision {{ t.decisions }}</p>
{% if message %}<p class="error" id="error">{{ message }}</p>{% endif %}
{% if t.result %}<p class="result" id="result">{{ t.result }}</p><p><a href="/">play again</a></p>{% endif %}
<div class="cols"><div class="picture-box"><a href="/play/{{ t.id }}/picture.png?at={{ t.decisions }}">
<img class="table-picture" id="picture" alt="the table as {{ t.seat }} sees it"
 src="/play/{{ t.id }}/picture.png?at={{ t.decisions }}"></a></div>
<div class="side">
{% if t.waiting %}<form method="post" action="/play/{{ t.id }}/continue" id="continue">
<p>The other seats are still thinking (a request stops them after a while).</p>
<button type="submit">let them go on</button></form>{% endif %}
{% if t.legal %}<h2>your decision: {{ t.decision }}</h2>
<form method="post" action="/play/{{ t.id }}/move" class="moves" id="moves">
<input type="hidden" name="at" value="{{ t.decisions }}">
{% for action, name in t.legal %}<button type="submit" name="action" value="{{ action }}">{{ name }}</button>{% endfor %}
</form>{% endif %}
<h2>{% if t.over %}the whole table{% else %}what you see{% endif %}</h2><pre id="view">{{ t.view }}</pre>
<h2>what you were told</h2><div class="told-box"><ol class="told" id="told">{% for line in t.told %}<li>{{ line }}</li>{% endfor %}</ol></div>
</div></div>{% endblock %}""",
    "games.html": """{% extends "base.html" %}{% block main %}
<h1>Games of {{ run }}</h1>
<p><a href="/results?run={{ run|urlencode }}">results of this run</a></p>
<table class="rows" id="games"><tr><th>game</th><th>seats</th><th>returns</th><th>decisions</th></tr>
{% for r in rows %}<tr><td><a href="/replay/view?run={{ run|urlencode }}&game={{ r.key }}&step=0">{{ r.key }}</a></td>
<td>{{ r.seats|join(", ") }}</td><td>{{ r.returns }}</td><td>{{ r.length }}</td></tr>{% endfor %}</table>
<p>{% if start > 0 %}<a href="/replay?run={{ run|urlencode }}&start={{ [start - per_page, 0]|max }}">earlier games</a>{% endif %}
{% if more %}<a href="/replay?run={{ run|urlencode }}&start={{ start + per_page }}" id="later">later games</a>{% endif %}</p>
{% endblock %}""",
    "replay.html": """{% extends "base.html" %}{% block main %}
<h1>{{ r.game_name }}, game {{ key }} of <a href="/replay?run={{ r.run|urlencode }}">{{ r.run }}</a></h1>
<p>seats: {% for s in r.seats %}player_{{ loop.index0 }} ({{ s }}){% if not loop.last %}, {% endif %}{% endfor %}</p>
<p>view as: {% for v in viewers %}{% if v == viewer %}<b>{{ v }}</b>{% else %}<a href="{{ link(step, v) }}" id="viewer-{{ v }}">{{ v }}</a>{% endif %} {% endfor %}</p>
<nav class="steps"><a href="{{ link(0, viewer) }}" id="first">first</a>
{% if step > 0 %}<a href="{{ link(step - 1, viewer) }}" id="prev">previous</a>{% endif %}
<span id="step">step {{ step }} of {{ last }}</span>
{% if step < last %}<a href="{{ link(step + 1, viewer) }}" id="next">next</a>{% endif %}
<a href="{{ link(last, viewer) }}" id="last">last</a></nav>
{% if move %}<p id="move">{{ move }}</p>{% endif %}
<div class="cols"><div class="picture-box"><img class="table-picture" id="picture" alt="the table" src="{{ picture }}"></div>
<div class="side">{% if view %}<pre id="view">{{ view }}</pre>{% endif %}
<h2>told to {{ viewer }}</h2><div class="told-box"><ol class="told" id="told">{% for line in told %}<li>{{ line }}</li>{% endfor %}</ol></div></div></div>
{% endblock %}""",
    "results.html": """{% extends "base.html" %}{% block main %}
<p>{{ source }} of run {{ run }}{% if games %}: <a href="/replay?run={{ run|urlencode }}">replay its games</a>{% endif %}</p>
<div class="report" id="report">{{ body|safe }}
{% for name, src in plots %}<h2>{{ name }}</h2><img src="{{ src }}" alt="{{ name }}">{% endfor %}</div>{% endblock %}""",
}
