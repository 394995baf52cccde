"""Model > Generate (issue 30 item 3): watch the loaded model write one token at a time — the
prompt, Step and Run N with temperature, top-k, top-p and a seed, each step's chosen token and
top 10 (generate_window.py, generate_panel.py), the KV cache it reads (cache_view.py) and
"open this step's layer" (open_step.py), over one GenerateState (generate_state.py). The
numbers come from ``attention_explorer.generation``, computed on a worker thread."""
