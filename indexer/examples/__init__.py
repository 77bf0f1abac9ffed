"""Users' own (question, SQL) examples.

- `files`    reading example files (JSON Lines, CSV, JSON) into `UserExample`s;
- `stored`   `STORE/examples.sqlite`, where validated examples stay between builds;
- `records`  examples as knowledge-base records: keys, payloads, which ones a build keeps;
- `updates`  `add_examples` / `remove_examples`: validate, store and publish a build with them.
"""
