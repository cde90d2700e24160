#include "flowcl/runtime.h"
#include "flowcl/version.h"

const char *fcl_version(void) { return FLOWCL_VERSION_STRING; }
