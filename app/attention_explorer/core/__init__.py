"""The bottom layer, below the engine: the stage catalogue (stages.py and the rules that need a
config, stage_rules.py), the one number formatter (numbers.py) and block reductions (blocks.py)."""
