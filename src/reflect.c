/*
 * reflect.c - gRPC server reflection: answers one ServerReflectionRequest from
 * the FileDescriptorProtos embedded at build time, read in place with a small
 * protobuf wire walker (descriptor.proto's field numbers below).
 */
#include "reflect.h"

#include <stdlib.h>
#include <string.h>

#include "reflection.pb-c.h"

#define REFLECT_MAX_FILES	16	/* files in one answer: ours are 4 */
#define REFLECT_MAX_SERVICES	16
#define REFLECT_MAX_NAME	256	/* a service's full name */

/* google.rpc.Code values of error_response. */
#define REFLECT_INVALID_ARGUMENT	3
#define REFLECT_NOT_FOUND		5

/* descriptor.proto's field numbers that the walker reads. */
#define FILE_NAME		1
#define FILE_PACKAGE		2
#define FILE_DEPENDENCY		3
#define FILE_MESSAGE		4
#define FILE_ENUM		5
#define FILE_SERVICE		6
#define FILE_EXTENSION		7
#define MSG_FIELD		2
#define MSG_NESTED		3
#define MSG_ENUM		4
#define MSG_EXTENSION		6
#define MSG_ONEOF		8
#define ENUM_VALUE		2
#define SERVICE_METHOD		2
#define NAME			1	/* every *DescriptorProto's name */

/* protoc-c --descriptor_set_out of every file in proto/ (the Makefile's $(GEN)/descriptors.c). */
extern const uint8_t reflect_descriptor_set[];
extern const size_t reflect_descriptor_set_len;

/* Bytes of a message being walked, or of one of its fields. */
struct reflect_span {
	const uint8_t	*p;
	size_t		 len;
};

/* The files of one answer: the one asked for, then its imports. */
struct reflect_files {
	size_t			n;
	struct reflect_span	f[REFLECT_MAX_FILES];
};

static bool	reflect_varint(struct reflect_span *m, uint64_t *v);
static bool	reflect_field(struct reflect_span *m, uint32_t *num, struct reflect_span *sub);
static struct reflect_span reflect_string(struct reflect_span m, uint32_t num);
static bool	reflect_eq(struct reflect_span s, const char *name, size_t len);
static int	reflect_scope(struct reflect_span m, const char *sym, size_t len, size_t *inner);
static bool	reflect_named(struct reflect_span m, const char *sym, size_t len);
static bool	reflect_enum_has(struct reflect_span e, const char *sym, size_t len);
static bool	reflect_message_has(struct reflect_span m, const char *sym, size_t len,
		    bool service);
static bool	reflect_file_has(struct reflect_span f, const char *sym);
static bool	reflect_file_find(const char *name, size_t len, const char *sym,
		    struct reflect_span *out);
static void	reflect_add(struct reflect_files *fs, struct reflect_span f);
static size_t	reflect_list(char names[][REFLECT_MAX_NAME], size_t max);
struct reflect_reply;
static void	reflect_reply_list(struct reflect_reply *a);
static void	reflect_reply_files(struct reflect_reply *a, struct reflect_span f);
static void	reflect_reply_error(struct reflect_reply *a, const char *why);
static void	reflect_fill(struct reflect_reply *a,
		    const Grpc__Reflection__V1__ServerReflectionRequest *q);

/* A base-128 varint; false past the end or over 10 bytes. */
static bool
reflect_varint(struct reflect_span *m, uint64_t *v)
{
	unsigned shift;

	*v = 0;
	for (shift = 0; shift < 70 && m->len > 0; shift += 7) {
		uint8_t b = *m->p++;

		m->len--;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/*
 * The next field of m: its number, and its bytes when length-delimited (else
 * an empty span). False at the end of m or on bytes that are not protobuf.
 */
static bool
reflect_field(struct reflect_span *m, uint32_t *num, struct reflect_span *sub)
{
	uint64_t key, v;

	if (m->len == 0 || !reflect_varint(m, &key))
		return false;
	*num = (uint32_t)(key >> 3);
	sub->p = m->p;
	sub->len = 0;
	switch (key & 7) {
	case 0:
		return reflect_varint(m, &v);
	case 1:
		v = 8;
		break;
	case 2:
		if (!reflect_varint(m, &v))
			return false;
		sub->p = m->p;
		sub->len = (size_t)v;
		break;
	case 5:
		v = 4;
		break;
	default:
		return false;
	}
	if (v > m->len)
		return false;
	m->p += v;
	m->len -= (size_t)v;
	return true;
}

/* The first length-delimited field num of m (a name, a package), or empty. */
static struct reflect_span
reflect_string(struct reflect_span m, uint32_t num)
{
	struct reflect_span sub, none = { NULL, 0 };
	uint32_t n;

	while (reflect_field(&m, &n, &sub))
		if (n == num)
			return sub;
	return none;
}

static bool
reflect_eq(struct reflect_span s, const char *name, size_t len)
{
	return s.len == len && (len == 0 || memcmp(s.p, name, len) == 0);
}

/*
 * sym against m's name: 0 no match, 1 sym is the name, 2 sym is inside it
 * ("<name>.<rest>", *inner the offset of rest).
 */
static int
reflect_scope(struct reflect_span m, const char *sym, size_t len, size_t *inner)
{
	struct reflect_span name = reflect_string(m, NAME);

	if (name.len == 0 || name.len > len || memcmp(name.p, sym, name.len) != 0)
		return 0;
	if (name.len == len)
		return 1;
	if (sym[name.len] != '.')
		return 0;
	*inner = name.len + 1;
	return 2;
}

/* m (a field, an oneof, a method...) is named sym. */
static bool
reflect_named(struct reflect_span m, const char *sym, size_t len)
{
	return reflect_eq(reflect_string(m, NAME), sym, len);
}

/* The enum, or one of its values (in the enum's own scope, as protobuf has it). */
static bool
reflect_enum_has(struct reflect_span e, const char *sym, size_t len)
{
	struct reflect_span sub;
	uint32_t n;

	if (reflect_named(e, sym, len))
		return true;
	while (reflect_field(&e, &n, &sub))
		if (n == ENUM_VALUE && reflect_named(sub, sym, len))
			return true;
	return false;
}

/* The message, or a field, oneof, nested message or enum in it; a service, or a method. */
static bool
reflect_message_has(struct reflect_span m, const char *sym, size_t len, bool service)
{
	struct reflect_span sub;
	size_t in = 0;
	uint32_t n;
	int s = reflect_scope(m, sym, len, &in);

	if (s != 2)
		return s == 1;
	sym += in;
	len -= in;
	while (reflect_field(&m, &n, &sub)) {
		if (service ? n == SERVICE_METHOD && reflect_named(sub, sym, len) :
		    ((n == MSG_FIELD || n == MSG_EXTENSION || n == MSG_ONEOF) &&
		    reflect_named(sub, sym, len)) ||
		    (n == MSG_NESTED && reflect_message_has(sub, sym, len, false)) ||
		    (n == MSG_ENUM && reflect_enum_has(sub, sym, len)))
			return true;
	}
	return false;
}

/* File f declares the fully-qualified symbol sym. */
static bool
reflect_file_has(struct reflect_span f, const char *sym)
{
	struct reflect_span pkg = reflect_string(f, FILE_PACKAGE), sub;
	size_t len = strlen(sym);
	uint32_t n;

	if (pkg.len > 0) {
		if (len <= pkg.len + 1 || memcmp(sym, pkg.p, pkg.len) != 0 || sym[pkg.len] != '.')
			return false;
		sym += pkg.len + 1;
		len -= pkg.len + 1;
	}
	while (reflect_field(&f, &n, &sub)) {
		if ((n == FILE_MESSAGE && reflect_message_has(sub, sym, len, false)) ||
		    (n == FILE_ENUM && reflect_enum_has(sub, sym, len)) ||
		    (n == FILE_SERVICE && reflect_message_has(sub, sym, len, true)) ||
		    (n == FILE_EXTENSION && reflect_named(sub, sym, len)))
			return true;
	}
	return false;
}

/* The embedded file that declares sym, or (sym NULL) of that name. */
static bool
reflect_file_find(const char *name, size_t len, const char *sym, struct reflect_span *out)
{
	struct reflect_span set = { reflect_descriptor_set, reflect_descriptor_set_len };
	uint32_t n;

	while (reflect_field(&set, &n, out))
		if (n == 1 && (sym != NULL ? reflect_file_has(*out, sym) :
		    reflect_eq(reflect_string(*out, FILE_NAME), name, len)))
			return true;
	return false;
}

/* f into the answer unless there already, then the files it imports. */
static void
reflect_add(struct reflect_files *fs, struct reflect_span f)
{
	struct reflect_span sub, dep;
	size_t i;
	uint32_t n;

	for (i = 0; i < fs->n; i++)
		if (fs->f[i].p == f.p)
			return;
	if (fs->n == REFLECT_MAX_FILES)
		return;
	fs->f[fs->n++] = f;
	while (reflect_field(&f, &n, &sub))
		if (n == FILE_DEPENDENCY && reflect_file_find((const char *)sub.p, sub.len, NULL, &dep))
			reflect_add(fs, dep);
}

/* Every service's full name (<package>.<service>), in the files' order. */
static size_t
reflect_list(char names[][REFLECT_MAX_NAME], size_t max)
{
	struct reflect_span set = { reflect_descriptor_set, reflect_descriptor_set_len };
	struct reflect_span f, sub, pkg, name;
	size_t k = 0;
	uint32_t n, m;

	while (reflect_field(&set, &n, &f)) {
		if (n != 1)
			continue;
		pkg = reflect_string(f, FILE_PACKAGE);
		while (k < max && reflect_field(&f, &m, &sub)) {
			if (m != FILE_SERVICE)
				continue;
			name = reflect_string(sub, NAME);
			if (pkg.len + 1 + name.len >= REFLECT_MAX_NAME)
				continue;
			memcpy(names[k], pkg.p, pkg.len);
			names[k][pkg.len] = '.';
			memcpy(names[k] + pkg.len + 1, name.p, name.len);
			names[k][pkg.len + 1 + name.len] = '\0';
			k++;
		}
	}
	return k;
}

/* The parts of one answer, alive until it is packed. */
struct reflect_reply {
	Grpc__Reflection__V1__ServerReflectionResponse	r;
	Grpc__Reflection__V1__FileDescriptorResponse	fd;
	Grpc__Reflection__V1__ListServiceResponse	ls;
	Grpc__Reflection__V1__ExtensionNumberResponse	en;
	Grpc__Reflection__V1__ErrorResponse		er;
	Grpc__Reflection__V1__ServiceResponse		sv[REFLECT_MAX_SERVICES];
	Grpc__Reflection__V1__ServiceResponse		*svp[REFLECT_MAX_SERVICES];
	char						names[REFLECT_MAX_SERVICES][REFLECT_MAX_NAME];
	ProtobufCBinaryData				bin[REFLECT_MAX_FILES];
	struct reflect_files				fs;
};

/* list_services: every service of the embedded files. */
static void
reflect_reply_list(struct reflect_reply *a)
{
	a->ls.n_service = reflect_list(a->names, REFLECT_MAX_SERVICES);
	for (size_t i = 0; i < a->ls.n_service; i++) {
		grpc__reflection__v1__service_response__init(&a->sv[i]);
		a->sv[i].name = a->names[i];
		a->svp[i] = &a->sv[i];
	}
	a->ls.service = a->svp;
	a->r.message_response_case =
	    GRPC__REFLECTION__V1__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_LIST_SERVICES_RESPONSE;
	a->r.list_services_response = &a->ls;
}

/* A file found: it and the files it imports. */
static void
reflect_reply_files(struct reflect_reply *a, struct reflect_span f)
{
	reflect_add(&a->fs, f);
	for (size_t i = 0; i < a->fs.n; i++) {
		a->bin[i].data = (uint8_t *)(uintptr_t)a->fs.f[i].p;
		a->bin[i].len = a->fs.f[i].len;
	}
	a->fd.n_file_descriptor_proto = a->fs.n;
	a->fd.file_descriptor_proto = a->bin;
	a->r.message_response_case =
	    GRPC__REFLECTION__V1__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_FILE_DESCRIPTOR_RESPONSE;
	a->r.file_descriptor_response = &a->fd;
}

/* Nothing to answer with: an error response (NOT_FOUND unless set). */
static void
reflect_reply_error(struct reflect_reply *a, const char *why)
{
	if (a->er.error_code == 0)
		a->er.error_code = REFLECT_NOT_FOUND;
	a->r.message_response_case =
	    GRPC__REFLECTION__V1__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_ERROR_RESPONSE;
	a->er.error_message = (char *)(uintptr_t)why;	/* only read by pack */
	a->r.error_response = &a->er;
}

/* Fills the answer to q: what it asked for, or an error response saying why not. */
static void
reflect_fill(struct reflect_reply *a, const Grpc__Reflection__V1__ServerReflectionRequest *q)
{
	struct reflect_span f;
	const char *why = "";

	switch (q->message_request_case) {
	case GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_LIST_SERVICES:
		reflect_reply_list(a);
		return;
	case GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_BY_FILENAME:
		if (reflect_file_find(q->file_by_filename, strlen(q->file_by_filename), NULL, &f)) {
			reflect_reply_files(a, f);
			return;
		}
		why = "file not found";
		break;
	case GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_SYMBOL:
		if (reflect_file_find(NULL, 0, q->file_containing_symbol, &f)) {
			reflect_reply_files(a, f);
			return;
		}
		why = "symbol not found";
		break;
	case GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_ALL_EXTENSION_NUMBERS_OF_TYPE:
		if (reflect_file_find(NULL, 0, q->all_extension_numbers_of_type, &f)) {
			a->en.base_type_name = q->all_extension_numbers_of_type;
			a->r.message_response_case =
			    GRPC__REFLECTION__V1__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_ALL_EXTENSION_NUMBERS_RESPONSE;
			a->r.all_extension_numbers_response = &a->en;
			return;
		}
		why = "type not found";
		break;
	case GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_EXTENSION:
		why = "extension not found (the services declare no extensions)";
		break;
	default:
		a->er.error_code = REFLECT_INVALID_ARGUMENT;
		why = "no request: set one of the message_request fields";
		break;
	}
	reflect_reply_error(a, why);
}

enum reflect_status
reflect_answer(const uint8_t *req, size_t len, uint8_t **out, size_t *outlen)
{
	Grpc__Reflection__V1__ServerReflectionRequest *q =
	    grpc__reflection__v1__server_reflection_request__unpack(NULL, len, req);
	struct reflect_reply *a;

	*out = NULL;
	*outlen = 0;
	if (q == NULL)
		return REFLECT_BAD_REQUEST;
	a = calloc(1, sizeof(*a));
	if (a == NULL) {
		grpc__reflection__v1__server_reflection_request__free_unpacked(q, NULL);
		return REFLECT_NO_MEMORY;
	}
	grpc__reflection__v1__server_reflection_response__init(&a->r);
	grpc__reflection__v1__file_descriptor_response__init(&a->fd);
	grpc__reflection__v1__list_service_response__init(&a->ls);
	grpc__reflection__v1__extension_number_response__init(&a->en);
	grpc__reflection__v1__error_response__init(&a->er);
	a->r.valid_host = q->host;
	a->r.original_request = q;
	reflect_fill(a, q);
	*outlen = protobuf_c_message_get_packed_size(&a->r.base);
	*out = malloc(*outlen > 0 ? *outlen : 1);
	if (*out != NULL)
		protobuf_c_message_pack(&a->r.base, *out);
	free(a);
	grpc__reflection__v1__server_reflection_request__free_unpacked(q, NULL);
	return *out != NULL ? REFLECT_OK : REFLECT_NO_MEMORY;
}
