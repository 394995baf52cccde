"""Everything that writes a file: what any writer may write (output_policy.py), one file replaced
atomically (atomic.py), several files replaced together or not at all (transaction.py)."""
