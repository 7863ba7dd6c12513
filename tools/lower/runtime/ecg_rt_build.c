/* ecg runtime: its build identity (ecg_rt.h "Build identity"). */
#include "ecg_rt.h"

const char *ecg_rt1_build_id(void) { return ECG_RT_BUILD_ID; }
