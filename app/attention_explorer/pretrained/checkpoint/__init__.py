"""Reading a model folder: discovery (available.py, source.py), config and tensor checks
(validate.py, tensor_file.py, role_reader.py), weights (weights.py, stored.py), the tokenizer
(tokenize.py, token_labels.py, text_limits.py), and sessions saved by reference
(fingerprint.py: what a session saved by reference checks)."""
