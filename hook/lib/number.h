/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SH_NUMBER_H
#define SH_NUMBER_H

/* A whole decimal (or 0x hex) number in [min, max]: -EINVAL, -ERANGE. */
int number_parse(const char *s, long long min, long long max, long long *ret);

#endif /* SH_NUMBER_H */
