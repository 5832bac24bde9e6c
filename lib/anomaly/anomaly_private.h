/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_ANOMALY_PRIVATE_H
#define TH_ANOMALY_PRIVATE_H

#include "th_anomaly.h"

/** Bit index of enumerated feature @p f's value in struct th_mfs.set (31: none). */
unsigned th_mfs__enum_index(const struct th_wl *wl, enum th_feat f);

#endif /* TH_ANOMALY_PRIVATE_H */
