"""The health checklist: a declarative rule file and a pure evaluator over the run model."""
