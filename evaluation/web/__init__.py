"""`fowlplay-web`: a browser table to play against any agent, replay recorded games and read reports.

    fowlplay-web --runs runs --port 8000        # then open http://127.0.0.1:8000

`tables` holds the games (plain Python), `app` the Flask routes, `pages` the templates, `cli` the
command. A play table keeps the game on the server and sends the human seat only its own view.
"""
