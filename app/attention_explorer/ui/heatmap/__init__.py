"""One heatmap view: the image, axes and labels, cell numbers, the title, selection, zoom, the
context menu and the hover arithmetic."""
