"""The walkthrough on screen: its panel, what each step reveals, the sum view, the presenter
mode and the experiment banner."""
