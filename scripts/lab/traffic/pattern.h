/* SPDX-License-Identifier: GPL-2.0 */
/* The lab's byte stream, shared by its senders and receivers. */
#ifndef LAB_PATTERN_H
#define LAB_PATTERN_H

#include <stdint.h>

/* The stream's byte at offset @off: varies within and across pages, so a
 * frag placed at the wrong dmabuf offset or out of order is detected.
 */
static inline uint8_t pattern_byte(uint64_t off, uint32_t seed)
{
	return (uint8_t)((off * 131) ^ (off >> 9) ^ (off >> 17) ^ seed);
}

#endif
