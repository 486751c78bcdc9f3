"""The demo's harmfulness screen as a method: its descriptor (`method.py`), stage (`stage.py`), record
(`records.py`), report (`report.py`), HTML view (`view.py`) and prompt (`prompts/demo_screen.j2`)."""
