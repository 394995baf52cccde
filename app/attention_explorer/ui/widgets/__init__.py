"""Small widgets and layout helpers every room uses: plain-text labels and message boxes, rows
and forms, a flow layout, a labelled slider, the colour maps."""
