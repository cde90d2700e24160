#include <flowcl/flowcl.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  unsigned platforms = 0;
  if (fcl_platform_count(&platforms) != FCL_OK) {
    fprintf(stderr, "%s\n", fcl_last_error());
    return 1;
  }
  printf("flowcl %s, %u platform(s)\n", fcl_version(), platforms);
  return strcmp(fcl_version(), FLOWCL_VERSION_STRING) == 0 ? 0 : 1;
}
