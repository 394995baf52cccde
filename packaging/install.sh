#!/bin/sh
# Attention Explorer @VERSION@: add (or remove) a menu launcher for the current user. No root.
#
#   ./install.sh              copy the app to ~/.local/share/attention-explorer, add a menu entry,
#                             the icon, and a command in ~/.local/bin
#   ./install.sh --uninstall  remove all of that again
#
# Respects XDG_DATA_HOME (default ~/.local/share). Running the app needs no install at all:
# ./attention-explorer/attention-explorer
set -eu

NAME=attention-explorer
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${XDG_DATA_HOME:-$HOME/.local/share}
APP_DIR=$DATA/$NAME
BIN_DIR=$HOME/.local/bin
DESKTOP=$DATA/applications/$NAME.desktop
ICON_PNG=$DATA/icons/hicolor/256x256/apps/$NAME.png
ICON_SVG=$DATA/icons/hicolor/scalable/apps/$NAME.svg

refresh() {
  command -v update-desktop-database >/dev/null 2>&1 \
    && update-desktop-database -q "$DATA/applications" 2>/dev/null || true
  command -v gtk-update-icon-cache >/dev/null 2>&1 \
    && gtk-update-icon-cache -q -t "$DATA/icons/hicolor" 2>/dev/null || true
}

uninstall() {
  rm -f "$DESKTOP" "$ICON_PNG" "$ICON_SVG"
  if [ -L "$BIN_DIR/$NAME" ]; then rm -f "$BIN_DIR/$NAME"; fi
  rm -rf "$APP_DIR"
  refresh
  echo "Attention Explorer removed (your sessions and settings were left alone)."
}

install() {
  if [ "$(id -u)" = 0 ]; then
    echo "install.sh: note: installing for root only; run it as your own user instead." >&2
  fi
  [ -x "$HERE/$NAME/$NAME" ] || { echo "install.sh: $HERE/$NAME/$NAME not found" >&2; exit 1; }
  mkdir -p "$DATA/applications" "$(dirname "$ICON_PNG")" "$(dirname "$ICON_SVG")" "$BIN_DIR"
  if [ "$HERE/$NAME" != "$APP_DIR" ]; then
    rm -rf "$APP_DIR.new"
    cp -R "$HERE/$NAME" "$APP_DIR.new"
    rm -rf "$APP_DIR"
    mv "$APP_DIR.new" "$APP_DIR"
  fi
  cp "$HERE/resources/icon.png" "$ICON_PNG"
  cp "$HERE/resources/icon.svg" "$ICON_SVG"
  sed -e "s|^Exec=.*|Exec=\"$APP_DIR/$NAME\" %f|" \
      -e "s|^TryExec=.*|TryExec=$APP_DIR/$NAME|" \
      "$HERE/$NAME.desktop" > "$DESKTOP"
  chmod 644 "$DESKTOP"
  ln -sf "$APP_DIR/$NAME" "$BIN_DIR/$NAME"
  refresh
  echo "Attention Explorer @VERSION@ installed: find it in your applications menu,"
  echo "or run $BIN_DIR/$NAME. Remove it with: $0 --uninstall"
}

case "${1:-}" in
  --uninstall|-u) uninstall ;;
  ""|--install) install ;;
  -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) echo "install.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
esac
