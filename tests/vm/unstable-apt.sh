# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash disable=SC2016 # apt format strings
#
# Sourced by the scripts that take packages from Debian's unstable suite
# (fetch-kernel.sh, fetch-deb.sh, the node image): find the Debian mirror
# that this machine's apt sources already name, and run apt on a private
# configuration so that the system's own lists and state are never touched.
#
#   unstable_mirror            prints the mirror URI (VM_APT_MIRROR wins)
#   unstable_apt_init DIR      fills the apt_opts array for a private apt
#                              under DIR and runs `apt-get update`;
#                              returns 1 (with the log on stderr) when the
#                              suite cannot be read
#   unstable_field PKG FIELD   the candidate's FIELD
#
# VM_KERNEL_SUITE names the suite (unstable).

unstable_keyring=/usr/share/keyrings/debian-archive-keyring.gpg

# The Debian archive (not the security one) that the system's apt already
# uses. First ask apt, which knows each source's Release labels once the
# system lists exist; otherwise read the sources files ourselves.
unstable_mirror_from_apt() {
	apt-get indextargets --format '$(LABEL)|$(ORIGIN)|$(TARGET_OF)|$(REPO_URI)' 2>/dev/null |
		awk -F'|' '$1 == "Debian" && $2 == "Debian" && $3 == "deb" { print $4; exit }'
}

unstable_mirror_from_files() {
	local f
	{
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -r "$f" ] || continue
			awk '$1 == "deb" {
				i = 2
				if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
				print $i "|" $(i + 1)
			}' "$f"
		done
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -r "$f" ] || continue
			# deb822: one stanza per paragraph
			awk 'function flush() {
				if (types ~ /(^| )deb( |$)/ && enabled !~ /^no$/)
					print uris "|" suites
				types = uris = suites = enabled = ""
			}
			/^[ \t]*$/ { flush(); next }
			/^#/ { next }
			tolower($1) == "types:" { $1 = ""; types = $0 }
			tolower($1) == "uris:" { $1 = ""; uris = $0 }
			tolower($1) == "suites:" { $1 = ""; suites = $0 }
			tolower($1) == "enabled:" { enabled = tolower($2) }
			END { flush() }' "$f"
		done
	} | awk -F'|' '{
		n = split($1, u, " ")
		for (i = 1; i <= n; i++)
			if (u[i] !~ /security/ && $2 !~ /security/ && u[i] ~ /^(https?|file):/) {
				print u[i]; exit
			}
	}'
}

unstable_mirror() {
	local m=${VM_APT_MIRROR:-}
	[ -n "$m" ] || m=$(unstable_mirror_from_apt || true)
	[ -n "$m" ] || m=$(unstable_mirror_from_files || true)
	[ -n "$m" ] || return 1
	echo "${m%/}"
}

unstable_apt_init() {
	local dir=$1 mirror suite=${VM_KERNEL_SUITE:-unstable}
	mirror=$(unstable_mirror) || { echo "no Debian mirror found in the apt sources" >&2; return 1; }
	mkdir -p "$dir/etc/sources.list.d" "$dir/etc/preferences.d" \
		"$dir/state/lists/partial" "$dir/cache/archives/partial" "$dir/dl"
	: >"$dir/state/status"
	echo "deb [signed-by=$unstable_keyring] $mirror $suite main" >"$dir/etc/sources.list"
	apt_opts=(
		-o "Dir::Etc::SourceList=$dir/etc/sources.list"
		-o "Dir::Etc::SourceParts=$dir/etc/sources.list.d"
		-o "Dir::Etc::Preferences=$dir/etc/preferences"
		-o "Dir::Etc::PreferencesParts=$dir/etc/preferences.d"
		-o "Dir::State=$dir/state"
		-o "Dir::State::status=$dir/state/status"
		-o "Dir::Cache=$dir/cache"
		-o "Dir::Cache::pkgcache=$dir/cache/pkgcache.bin"
		-o "Dir::Cache::srcpkgcache=$dir/cache/srcpkgcache.bin"
		-o "APT::Architecture=amd64"
		-o "APT::Architectures::=amd64"
		-o "Acquire::Languages=none"
		-o "APT::Sandbox::User=root"
		-q
	)
	echo "apt-get update: $suite from $mirror" >&2
	if ! apt-get "${apt_opts[@]}" update >"$dir/update.log" 2>&1 ||
		grep -Eq '^(E:|W: Failed|Err:)' "$dir/update.log"; then
		cat "$dir/update.log" >&2
		echo "cannot read the $suite suite from $mirror" >&2
		return 1
	fi
}

# (apt-cache's output is read whole first: an awk that exits at the
# field would kill apt-cache with SIGPIPE, which pipefail turns into a
# failure at random.)
unstable_field() {
	local out

	out=$(apt-cache "${apt_opts[@]}" show "$1" 2>/dev/null) || true
	awk -v f="$2:" '$1 == f { $1 = ""; sub(/^ /, ""); print; exit } /^$/ { exit }' <<<"$out"
}
