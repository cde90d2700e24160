#!/bin/sh
# Every public name of include/flowcl/ is documented. Doxygen runs over the headers with the
# configured docs/Doxyfile.in, into WORK_DIR, and the test fails on
#   - any warning it prints: an undocumented function, type, macro or struct field, a doc error;
#   - a header without a file comment (`/** @file ... */`): doxygen says nothing about the names
#     of an undocumented file;
#   - an enum value without a doc comment: doxygen does not warn about those; its XML says.
# Usage: doxygen_check.sh DOXYFILE WORK_DIR DOXYGEN XMLLINT. Exit 77 (skipped): doxygen or xmllint
# missing (Debian 12: apt install doxygen libxml2-utils).
doxyfile=${1:?usage: doxygen_check.sh DOXYFILE WORK_DIR DOXYGEN XMLLINT}
work=${2:?usage: doxygen_check.sh DOXYFILE WORK_DIR DOXYGEN XMLLINT}
doxygen=${3:-doxygen}
xmllint=${4:-xmllint}
for tool in "$doxygen" "$xmllint"; do
  if ! command -v "$tool" > /dev/null 2>&1; then
    echo "doxygen_undocumented: '$tool' not found (apt install doxygen libxml2-utils): skipped"
    exit 77
  fi
done
rm -rf "$work" && mkdir -p "$work" || exit 1
log="$work/warnings.log"
# the configured file with this run's output directory and warning log
{ cat "$doxyfile" && echo "OUTPUT_DIRECTORY = $work" && echo "WARN_LOGFILE = $log"; } |
  "$doxygen" - > "$work/doxygen.out" 2>&1
rc=$?
bad=0
if [ -s "$log" ]; then
  echo "doxygen_undocumented: doxygen warnings (document these names, or fix the comments):"
  cat "$log"
  bad=1
elif [ $rc -ne 0 ]; then
  echo "doxygen_undocumented: doxygen failed (exit $rc):"
  cat "$work/doxygen.out"
  exit 1
fi
nfiles=0
for xml in "$work"/xml/*_8h.xml; do
  [ -f "$xml" ] || continue
  nfiles=$((nfiles + 1))
  file=$("$xmllint" --xpath 'string(/doxygen/compounddef/compoundname)' "$xml")
  described=$("$xmllint" --xpath 'boolean(normalize-space(/doxygen/compounddef/briefdescription)
    or normalize-space(/doxygen/compounddef/detaileddescription))' "$xml")
  if [ "$described" != "true" ]; then
    echo "$file: no file comment (/** @file ... */): its names go unchecked"
    bad=1
  fi
  values=$("$xmllint" --xpath '//enumvalue[not(normalize-space(briefdescription))
    and not(normalize-space(detaileddescription))]/name' "$xml" 2> /dev/null |
    sed 's/<name>//g; s/<\/name>/ /g')
  for v in $values; do
    echo "$file: enum value $v is not documented"
    bad=1
  done
done
if [ $nfiles -eq 0 ]; then
  echo "doxygen_undocumented: no header in doxygen's XML output ($work/xml)"
  exit 1
fi
[ $bad -eq 0 ] && echo "doxygen_undocumented: every public name of $nfiles headers documented"
exit $bad
