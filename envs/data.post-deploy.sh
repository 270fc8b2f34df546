#!/usr/bin/env bash
# Post-deploy script of the conda env beside it (the same for every env in envs/): Snakemake runs it
# once, in the new env, right after creating it. It installs the workflow's own delaycv into the
# env as a link to the package that the workflow runs and hashes, which workflow/rules/common.smk
# names in DELAYCV_PACKAGE (the checkout's delaycv/, or the installed one when the workflow is used
# as a module). A link, not a copy: the env never holds a stale delaycv, and the rule scripts check
# that the code they import has the digest that decided the job (delaycv.study.digests.check_code).
# delaycv's dependencies come from the env's own pins only.
set -euo pipefail
package="${DELAYCV_PACKAGE:?is not set: create the envs through the workflow (snakemake --sdm conda)}"
if [ ! -f "$package/__init__.py" ] || [ "$(basename "$package")" != delaycv ]; then
    echo "post-deploy: DELAYCV_PACKAGE=$package is not a delaycv package folder" >&2
    exit 1
fi
site="$(python -I -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
case "$site" in
"${CONDA_PREFIX:?is not set: run in the activated env}"/*) ;;
*)
    echo "post-deploy: python's site-packages ($site) is not in the env ($CONDA_PREFIX)" >&2
    exit 1
    ;;
esac
ln -sfn "$package" "$site/delaycv"
python -I -c 'import delaycv, os; d = delaycv.__path__[0]; print(d, "->", os.path.realpath(d))'
