"""Synthesis: (question, SQL) pairs for one traversal of one database.

- `pairs`            the values passed around (`QAPair`, `SynthesisRequest`, `Feedback`) and the
                     seams (`Synthesizer`, `FeedbackProducer`, `ChainRunner`);
- `templates`        the template synthesizer (offline): `query_plans` (the SQL a template
                     writes), `profiles` (what a traversal's tables hold), `phrasing` (the
                     question's words), `humanize` (names as words), `faithful` (does the
                     question say what the SQL does);
- `llm_synthesizer`  the language-model synthesizer; `batch_api` sends its calls as batches;
- `icrl`, `reward`, `feedback`, `chains`  the in-context reinforcement loop that refines
                     attempts, its reward and feedback, and the chains a build runs per traversal.
"""
