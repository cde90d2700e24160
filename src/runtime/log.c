/* Logging: a settable handler, a level from FLOWCL_LOG_LEVEL, stderr by default. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "flowcl/error.h"

static fcl_log_handler handler;
static void *handler_user;
static int level = -1; /* -1: not yet read from the environment */

static fcl_log_level level_from_env(void) {
  const char *env = getenv("FLOWCL_LOG_LEVEL");
  if (!env || !*env) return FCL_LOG_WARNING;
  static const char *names[] = {"debug", "info", "warning", "error", "none"};
  for (int i = 0; i <= FCL_LOG_NONE; ++i)
    if (strcasecmp(env, names[i]) == 0) return (fcl_log_level)i;
  if (strcasecmp(env, "warn") == 0) return FCL_LOG_WARNING;
  fprintf(stderr,
          "flowcl: warning: FLOWCL_LOG_LEVEL='%s' is not one of debug|info|warning|error|none; "
          "using warning\n",
          env);
  return FCL_LOG_WARNING;
}

void fcl_log_set_handler(fcl_log_handler h, void *user) {
  handler = h;
  handler_user = user;
}

void fcl_log_set_level(fcl_log_level l) { level = (int)l; }

fcl_log_level fcl_log_get_level(void) {
  if (level < 0) level = (int)level_from_env();
  return (fcl_log_level)level;
}

void fcl_log(fcl_log_level l, const char *format, ...) {
  if (l < fcl_log_get_level() || l >= FCL_LOG_NONE) return;
  char message[8192];
  va_list ap;
  va_start(ap, format);
  vsnprintf(message, sizeof message, format, ap);
  va_end(ap);
  if (handler) {
    handler(l, message, handler_user);
    return;
  }
  static const char *tags[] = {"debug", "info", "warning", "error"};
  fprintf(stderr, "flowcl: %s: %s\n", tags[l], message);
}
