/*
 * impl/src/errors.c: names and messages of the error codes, generated from
 * TSMR_ERRNO_MAP (spec/errors.md, ERR.CODE.1).
 */
#include "internal.h"

const char *tsmr_strerror(int code) {
  switch (code) {
  case TSMR_OK: return "success";
#define TSMR_STRERROR_CASE(name, value, text) case TSMR_##name: return text;
    TSMR_ERRNO_MAP(TSMR_STRERROR_CASE)
#undef TSMR_STRERROR_CASE
  default: return "unknown error";
  }
}

const char *tsmr_err_name(int code) {
  switch (code) {
  case TSMR_OK: return "OK";
#define TSMR_ERR_NAME_CASE(name, value, text) case TSMR_##name: return #name;
    TSMR_ERRNO_MAP(TSMR_ERR_NAME_CASE)
#undef TSMR_ERR_NAME_CASE
  default: return "UNKNOWN";
  }
}
