/*-------------------------------------------------------------------------
 *
 * test_vlogrow.c
 *	  Unit tests of src/core/vlogrow.h, the packed form of a value log's rows on
 *	  the spill device.
 *
 * Rows of lengths around every varint boundary are packed into one
 * stream, back to back and unaligned, as valuelog.c writes them: each
 * takes the size braid_vlog_packed_size says, its length reads back from
 * its varint, and it unpacks into a minimal tuple equal to the original
 * (its length in front, zero padding, the same bytes after).  A row that
 * is not packed is copied as it is.
 *
 * test/unit/test_vlogrow.c
 *
 *-------------------------------------------------------------------------
 */
#include "unit.h"

#include "core/vlogrow.h"

/* test_vlogrow_roundtrip: rows packed back to back unpack as they were. */
static void
test_vlogrow_roundtrip(void)
{
	static const uint32_t lens[] = {
		BRAID_VLOG_ROW_SKIP + 1, 16, 17, 100, 127 + BRAID_VLOG_ROW_SKIP,
		128 + BRAID_VLOG_ROW_SKIP, 129 + BRAID_VLOG_ROW_SKIP, 4000,
		16383 + BRAID_VLOG_ROW_SKIP, 16384 + BRAID_VLOG_ROW_SKIP, 32767, 32768,
		100000, (1U << 21) + BRAID_VLOG_ROW_SKIP,
	};
	const int	nlens = (int) (sizeof(lens) / sizeof(lens[0]));
	Check		c;
	size_t		total = 0,
				at = 0;
	uint8_t    *stream;
	uint8_t   **rows = xmalloc(sizeof(uint8_t *) * nlens);

	check_init(&c);
	for (int i = 0; i < nlens; i++)
		total += braid_vlog_packed_size(lens[i]);
	stream = xmalloc(total);
	/* pack, as valuelog.c writes: the varint, then the bytes after the skip */
	for (int i = 0; i < nlens; i++)
	{
		uint8_t		hdr[8];
		size_t		h = braid_vlog_pack_header(hdr, lens[i]);

		rows[i] = xmalloc(lens[i]);
		for (uint32_t b = 0; b < lens[i]; b++)
			rows[i][b] = (uint8_t) rng_next();
		memcpy(rows[i], &lens[i], sizeof(uint32_t));
		check_that(&c, h + lens[i] - BRAID_VLOG_ROW_SKIP == braid_vlog_packed_size(lens[i]),
				   "row of %u bytes: header %zu bytes, packed size %zu", lens[i], h,
				   braid_vlog_packed_size(lens[i]));
		memcpy(stream + at, hdr, h);
		memcpy(stream + at + h, rows[i] + BRAID_VLOG_ROW_SKIP, lens[i] - BRAID_VLOG_ROW_SKIP);
		at += h + lens[i] - BRAID_VLOG_ROW_SKIP;
	}
	check_that(&c, at == total, "stream of %zu bytes, sizes say %zu", at, total);
	/* read back in order, each from where the one before ended */
	at = 0;
	for (int i = 0; i < nlens; i++)
	{
		uint32_t	len = braid_vlog_packed_len(stream + at);
		uint8_t    *dst = xmalloc(lens[i] + 8);
		size_t		read;
		uint32_t	t_len;
		bool		zeros = true;

		check_that(&c, len == lens[i], "row %d: length %u read back as %u", i, lens[i], len);
		read = braid_vlog_row_copy(stream + at, true, lens[i], dst);
		check_that(&c, read == braid_vlog_packed_size(lens[i]),
				   "row %d: %zu bytes read, %zu stored", i, read,
				   braid_vlog_packed_size(lens[i]));
		memcpy(&t_len, dst, sizeof(t_len));
		for (int b = (int) sizeof(uint32_t); b < BRAID_VLOG_ROW_SKIP; b++)
			zeros &= dst[b] == 0;
		check_that(&c, t_len == lens[i] && zeros,
				   "row %d: unpacked t_len %u (want %u), padding zero %d", i, t_len,
				   lens[i], (int) zeros);
		check_that(&c, memcmp(dst + BRAID_VLOG_ROW_SKIP, rows[i] + BRAID_VLOG_ROW_SKIP,
							  lens[i] - BRAID_VLOG_ROW_SKIP) == 0,
				   "row %d (%u bytes): unpacked bytes differ", i, lens[i]);
		/* a row not packed is copied whole */
		memset(dst, 0xAA, lens[i]);
		read = braid_vlog_row_copy(rows[i], false, lens[i], dst);
		check_that(&c, read == lens[i] && memcmp(dst, rows[i], lens[i]) == 0,
				   "row %d: a whole row copied as it is", i);
		at += braid_vlog_packed_size(lens[i]);
		free(dst);
		free(rows[i]);
	}
	/* what the saving is for a typical row */
	check_that(&c, braid_vlog_packed_size(100) == 91 && braid_vlog_packed_size(200) == 192,
			   "packed sizes of 100 and 200 bytes: %zu and %zu", braid_vlog_packed_size(100),
			   braid_vlog_packed_size(200));
	check_report(&c, "vlogrow: rows packed back to back unpack as they were");
	free(stream);
	free(rows);
}

/*
 * test_vlogrow_segments: segments double from 1 MB to 64 MB, and the space
 * they reserve for some bytes is what a log appending rows (as valuelog.c
 * does: a new segment when the row does not fit) reserves.
 */
static void
test_vlogrow_segments(void)
{
	const double mb = 1024.0 * 1024.0;
	static const size_t rows[] = {64, 1000, 3 * 1024 * 1024};
	Check		c;

	check_init(&c);
	check_that(&c, braid_vlog_segment_size(1, 0) == 1024 * 1024 &&
			   braid_vlog_segment_size(2, 100) == 2 * 1024 * 1024 &&
			   braid_vlog_segment_size(7, 0) == 64 * 1024 * 1024 &&
			   braid_vlog_segment_size(500, 0) == 64 * 1024 * 1024 &&
			   braid_vlog_segment_size(1, 5 * 1024 * 1024) == 5 * 1024 * 1024,
			   "segment sizes");
	check_that(&c, braid_vlog_reserved_bytes(0) == 0 && braid_vlog_reserved_bytes(1) == mb &&
			   braid_vlog_reserved_bytes(mb) == mb && braid_vlog_reserved_bytes(mb + 1) == 3 * mb,
			   "the first segments: %.0f %.0f %.0f", braid_vlog_reserved_bytes(1),
			   braid_vlog_reserved_bytes(mb), braid_vlog_reserved_bytes(mb + 1));
	check_that(&c, braid_vlog_reserved_bytes(127 * mb) == 127 * mb &&
			   braid_vlog_reserved_bytes(127 * mb + 1) == 191 * mb &&
			   braid_vlog_reserved_bytes(1000 * mb) == 1023 * mb,
			   "64 MB segments: %.0f %.0f %.0f", braid_vlog_reserved_bytes(127 * mb),
			   braid_vlog_reserved_bytes(127 * mb + 1), braid_vlog_reserved_bytes(1000 * mb));

	/* rows appended as valuelog.c appends them, at most the segment size */
	for (int r = 0; r < (int) (sizeof(rows) / sizeof(rows[0])); r++)
	{
		for (double total = 0.5 * mb; total < 700 * mb; total *= 1.7)
		{
			uint32_t	n = 0;
			size_t		size = 0,
						used = 0;
			double		reserved = 0,
						written = 0;

			while (written + (double) rows[r] <= total)
			{
				if (n == 0 || used + rows[r] > size)
				{
					size = braid_vlog_segment_size(++n, rows[r]);
					reserved += (double) size;
					used = 0;
				}
				used += rows[r];
				written += (double) rows[r];
			}

			/*
			 * Rows dividing every segment fill them: the same space; others
			 * leave some of each unused, and a row larger than a segment
			 * makes it larger: within a segment of the count.
			 */
			if (1024 * 1024 % rows[r] == 0)
				check_that(&c, reserved == braid_vlog_reserved_bytes(written),
						   "rows of %zu bytes, %.0f bytes: %.0f reserved, %.0f counted",
						   rows[r], written, reserved, braid_vlog_reserved_bytes(written));
			else
				check_that(&c, braid_vlog_reserved_bytes(written) >= written &&
						   fabs(reserved - braid_vlog_reserved_bytes(written)) <= 64 * mb,
						   "rows of %zu bytes, %.0f bytes: %.0f reserved, %.0f counted",
						   rows[r], written, reserved, braid_vlog_reserved_bytes(written));
		}
	}
	check_report(&c, "vlogrow: segments double to 64 MB; their reservation counted");
}

/* unit_vlogrow: the packed rows of a value log on the device, its segments. */
void
unit_vlogrow(void)
{
	test_vlogrow_roundtrip();
	test_vlogrow_segments();
}
