"""Model mode: the Model panel, the worker that runs the model, the overview, the Output panel,
knockouts, the sweep dialog and the compare view."""
