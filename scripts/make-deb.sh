#!/usr/bin/env bash
# Builds ipdirect's .deb with dpkg-deb alone (no debhelper, no network): the release binary
# stripped, the generated man pages and completions, the agent's service and its configuration
# as conffiles, Depends computed by dpkg-shlibdeps, then checks it with lintian.
# Usage: scripts/make-deb.sh RELEASE_BUILD DOCS OUTDIR   (RELEASE_BUILD: the release --scratch-path)
set -euo pipefail
build=$1 docs=$2 out=$3
cd "$(dirname "$0")/.."
binary="$build/release/ipdirect"
version=$("$binary" --version)
arch=$(dpkg --print-architecture)
maintainer=${DEB_MAINTAINER:-"ipdirect developers <ipdirect@example.org>"}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage="$work/ipdirect_${version}_$arch"
scripts/install-tree.sh install "$stage" /usr "$binary" "$docs"

# The package carries a stripped binary: symbols double its size and nobody debugs from an
# installed package here (`make release` keeps them, for perf and gdb on the build machine).
strip --strip-unneeded "$stage/usr/bin/ipdirect"
gzip -9n "$stage"/usr/share/man/man1/ipdirect.1
# lintian's overrides, each with its reason (packaging/debian/lintian-overrides).
install -D -m 0644 packaging/debian/lintian-overrides "$stage/usr/share/lintian/overrides/ipdirect"

# Debian's places: the agent's configuration in /etc (conffiles: an upgrade keeps a user's
# edits), its unit in /lib/systemd/system, its state under /var/lib/ipdirect (systemd's
# StateDirectory makes it). The examples folder keeps only what is not installed elsewhere.
install -D -m 0644 Resources/default-config.toml "$stage/etc/ipdirect/config.toml"
install -D -m 0644 packaging/targets.txt "$stage/etc/ipdirect/targets.txt"
install -D -m 0600 packaging/agent.env "$stage/etc/ipdirect/agent.env"
install -D -m 0644 packaging/ipdirect-agent.service "$stage/lib/systemd/system/ipdirect-agent.service"
rm -f "$stage"/usr/share/doc/ipdirect/examples/{ipdirect-agent.service,targets.txt,agent.env}
doc="$stage/usr/share/doc/ipdirect"
scripts/deb-copyright.py "$build" >"$doc/copyright"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
{
  echo "ipdirect ($version) unstable; urgency=medium"
  echo
  echo "  * Built by make deb from the ipdirect repository at commit $commit."
  echo
  echo " -- $maintainer  $(date -R -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)")"
} | gzip -9n >"$doc/changelog.gz"

# Depends: what the binary links dynamically, as dpkg-shlibdeps names it (it wants a
# debian/control to read, so it runs in a scratch source tree).
mkdir -p "$work/src/debian"
printf 'Source: ipdirect\n\nPackage: ipdirect\nArchitecture: any\n' >"$work/src/debian/control"
depends=$(cd "$work/src" && dpkg-shlibdeps -O "$stage/usr/bin/ipdirect" | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "make-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
depends="$depends, adduser"

mkdir -p "$stage/DEBIAN"
install -m 0755 packaging/debian/postinst packaging/debian/prerm packaging/debian/postrm "$stage/DEBIAN/"
printf '/etc/ipdirect/config.toml\n/etc/ipdirect/targets.txt\n/etc/ipdirect/agent.env\n' >"$stage/DEBIAN/conffiles"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@MAINTAINER@/$maintainer/" \
  -e "s/@INSTALLED_SIZE@/$size/" -e "s/@DEPENDS@/$depends/" packaging/debian/control.in >"$stage/DEBIAN/control"
(cd "$stage" && find . \( -path ./DEBIAN -o -path ./etc \) -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"

mkdir -p "$out"
deb="$out/ipdirect_${version}_$arch.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >&2
echo "built $deb: $(du -h "$deb" | cut -f1), installed size ${size} KiB" >&2
echo "Depends: $depends" >&2
if command -v lintian >/dev/null; then
  lintian --fail-on error --info "$deb" >&2
fi
echo "$deb"
