/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A strict JSON (RFC 8259) checker, for the tests of getdelays' --json
 * output: is a text one valid JSON value, and what is a member of an object.
 * Header-only, shared by getdelays' unit tests and the recount selftests.
 */
#ifndef _JSON_CHECK_H
#define _JSON_CHECK_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct json_in {
	const char *p, *end;
	int depth;
};

static bool json_check_value(struct json_in *in);

static void json_check_ws(struct json_in *in)
{
	while (in->p < in->end &&
	       (*in->p == ' ' || *in->p == '\t' || *in->p == '\n' || *in->p == '\r'))
		in->p++;
}

static bool json_check_lit(struct json_in *in, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(in->end - in->p) < n || memcmp(in->p, lit, n))
		return false;
	in->p += n;
	return true;
}

static bool json_check_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/*
 * The rest of a UTF-8 sequence that starts with @c: is it well-formed (not
 * overlong, not a surrogate, at most U+10FFFF)? JSON text is UTF-8.
 */
static bool json_check_utf8(struct json_in *in, unsigned char c)
{
	unsigned int cp, n, i;

	if (c >= 0xc2 && c <= 0xdf)
		n = 1, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 2, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 3, cp = c & 0x07;
	else
		return false;
	for (i = 0; i < n; i++) {
		if (in->p >= in->end || ((unsigned char)*in->p & 0xc0) != 0x80)
			return false;
		cp = cp << 6 | ((unsigned char)*in->p++ & 0x3f);
	}
	return !((n == 2 && cp < 0x800) || (cp >= 0xd800 && cp <= 0xdfff) ||
		 (n == 3 && (cp < 0x10000 || cp > 0x10ffff)));
}

static bool json_check_string(struct json_in *in)
{
	int i;

	if (in->p >= in->end || *in->p++ != '"')
		return false;
	while (in->p < in->end) {
		unsigned char c = *in->p++;

		if (c == '"')
			return true;
		if (c < 0x20)
			return false;
		if (c >= 0x80 && !json_check_utf8(in, c))
			return false;
		if (c != '\\')
			continue;
		if (in->p >= in->end)
			return false;
		c = *in->p++;
		if (c == 'u') {
			for (i = 0; i < 4; i++)
				if (in->p >= in->end || !json_check_hex(*in->p++))
					return false;
		} else if (!c || !strchr("\"\\/bfnrt", c)) {
			return false;
		}
	}
	return false;
}

static bool json_check_digits(struct json_in *in)
{
	const char *start = in->p;

	while (in->p < in->end && *in->p >= '0' && *in->p <= '9')
		in->p++;
	return in->p > start;
}

static bool json_check_number(struct json_in *in)
{
	if (in->p < in->end && *in->p == '-')
		in->p++;
	if (in->p < in->end && *in->p == '0')
		in->p++;
	else if (!json_check_digits(in))
		return false;
	if (in->p < in->end && *in->p == '.') {
		in->p++;
		if (!json_check_digits(in))
			return false;
	}
	if (in->p < in->end && (*in->p == 'e' || *in->p == 'E')) {
		in->p++;
		if (in->p < in->end && (*in->p == '+' || *in->p == '-'))
			in->p++;
		if (!json_check_digits(in))
			return false;
	}
	return true;
}

static bool json_check_container(struct json_in *in, char close)
{
	bool first = true;

	if (++in->depth > 64)
		return false;
	in->p++;
	json_check_ws(in);
	if (in->p < in->end && *in->p == close) {
		in->p++;
		in->depth--;
		return true;
	}
	for (;;) {
		if (!first) {
			json_check_ws(in);
			if (in->p >= in->end)
				return false;
			if (*in->p == close) {
				in->p++;
				in->depth--;
				return true;
			}
			if (*in->p++ != ',')
				return false;
		}
		first = false;
		json_check_ws(in);
		if (close == '}') {
			if (!json_check_string(in))
				return false;
			json_check_ws(in);
			if (in->p >= in->end || *in->p++ != ':')
				return false;
		}
		if (!json_check_value(in))
			return false;
	}
}

static bool json_check_value(struct json_in *in)
{
	json_check_ws(in);
	if (in->p >= in->end)
		return false;
	switch (*in->p) {
	case '{':
		return json_check_container(in, '}');
	case '[':
		return json_check_container(in, ']');
	case '"':
		return json_check_string(in);
	case 't':
		return json_check_lit(in, "true");
	case 'f':
		return json_check_lit(in, "false");
	case 'n':
		return json_check_lit(in, "null");
	default:
		return json_check_number(in);
	}
}

/* Is [s, s + len) exactly one JSON value, with whitespace around? */
static inline bool json_valid(const char *s, size_t len)
{
	struct json_in in = { s, s + len, 0 };

	if (!json_check_value(&in))
		return false;
	json_check_ws(&in);
	return in.p == in.end;
}

/*
 * The raw text of member @key of the object @s (valid JSON), or NULL; its
 * length in *len. Only the object's own members, not those of nested ones.
 */
static inline const char *json_member(const char *s, const char *key, size_t *len)
{
	struct json_in in = { s, s + strlen(s), 0 };
	size_t klen = strlen(key);

	json_check_ws(&in);
	if (in.p >= in.end || *in.p++ != '{')
		return NULL;
	for (;;) {
		const char *k, *kend, *v;

		json_check_ws(&in);
		k = in.p;
		if (!json_check_string(&in))
			return NULL;
		kend = in.p;
		json_check_ws(&in);
		if (in.p >= in.end || *in.p++ != ':')
			return NULL;
		json_check_ws(&in);
		v = in.p;
		if (!json_check_value(&in))
			return NULL;
		if ((size_t)(kend - k) == klen + 2 && !memcmp(k + 1, key, klen)) {
			*len = in.p - v;
			return v;
		}
		json_check_ws(&in);
		if (in.p >= in.end || *in.p++ != ',')
			return NULL;
	}
}

/* Member @key of object @s as an unsigned integer; false if absent or not one. */
static inline bool json_member_u64(const char *s, const char *key, unsigned long long *v)
{
	size_t len;
	const char *m = json_member(s, key, &len);
	char *end;

	if (!m || *m < '0' || *m > '9')
		return false;
	*v = strtoull(m, &end, 10);
	return end == m + len;
}

/* Is member @key of object @s null? */
static inline bool json_member_null(const char *s, const char *key)
{
	size_t len;
	const char *m = json_member(s, key, &len);

	return m && len == 4 && !memcmp(m, "null", 4);
}

#endif /* _JSON_CHECK_H */
