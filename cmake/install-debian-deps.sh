#!/bin/sh
# Install the Debian 12 packages flowcl needs, and only those that are missing: running it again
# does nothing. Uses sudo when not run as root.
set -eu
packages="cmake make gcc libc6-dev pkg-config
  ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd clinfo
  openmpi-bin libopenmpi-dev
  libhdf5-openmpi-dev hdf5-tools
  libfftw3-dev libfftw3-mpi-dev
  libvkfft-dev
  nettle-dev
  libxml2-utils
  clang-format
  doxygen
  gnuplot-nox"
missing=""
for p in $packages; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing="$missing $p"
done
if [ -z "$missing" ]; then
  echo "install-debian-deps: all flowcl dependencies are installed"
  exit 0
fi
echo "install-debian-deps: installing:$missing"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing
