"""Graph passes, one module each; `declutter.declutter` runs them to a fixpoint."""
