# bash completion for gemini-box: its own --box-* options and their values.
# Words that are not gemini-box's are gemini's: completion falls back to files.
_gemini_box()
{
	local cur prev
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	case $prev in
	--box-dir)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return
		;;
	--box-image)
		local images
		images=$(podman images --format '{{.Repository}}:{{.Tag}}' 2>/dev/null)
		mapfile -t COMPREPLY < <(compgen -W "$images" -- "$cur")
		return
		;;
	esac
	if [[ $cur == --box* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "--box-dir --box-image --box-dry-run --box-status
			--box-list --box-json --box-stop --box-rm --box-recreate --box-prune --box-yes
			--box-shell --box-root --box-build --box-config --box-doctor --box-trust --box-egress --box-help --box-version" -- "$cur")
		return
	fi
	mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}
complete -o filenames -F _gemini_box gemini-box
