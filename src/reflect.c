/*
 * reflect.c - gRPC server reflection: answers one ServerReflectionRequest from
 * the FileDescriptorSet embedded at build time, unpacked once with protobuf-c's
 * code for descriptor.proto; each file is packed again for the answers.
 */
#include "reflect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "google/protobuf/descriptor.pb-c.h"
#include "reflection.pb-c.h"

#define REFLECT_MAX_FILES	16	/* files in one answer: ours are 4 */
#define REFLECT_MAX_SERVICES	16
#define REFLECT_MAX_NAME	256	/* a service's full name */

/* google.rpc.Code values of error_response. */
#define REFLECT_INVALID_ARGUMENT	3
#define REFLECT_NOT_FOUND		5

typedef Google__Protobuf__FileDescriptorProto		FileProto;
typedef Google__Protobuf__DescriptorProto		MsgProto;
typedef Google__Protobuf__EnumDescriptorProto		EnumProto;
typedef Google__Protobuf__ServiceDescriptorProto	SvcProto;

/* protoc-c --descriptor_set_out of every file in proto/ (the Makefile's $(GEN)/descriptors.c). */
extern const uint8_t reflect_descriptor_set[];
extern const size_t reflect_descriptor_set_len;

/* The set unpacked, and each file packed again, at the first request; kept for good. */
static Google__Protobuf__FileDescriptorSet	*reflect_set;
static ProtobufCBinaryData			*reflect_bin;

/* The files of one answer (indexes in reflect_set): the one asked for, then its imports. */
struct reflect_files {
	size_t	n;
	size_t	f[REFLECT_MAX_FILES];
};

static bool	reflect_load(void);
static bool	reflect_eq(const char *name, const char *sym, size_t len);
static bool	reflect_enum_has(const EnumProto *e, const char *sym, size_t len);
static bool	reflect_message_has(const MsgProto *m, const char *sym, size_t len);
static bool	reflect_service_has(const SvcProto *s, const char *sym, size_t len);
static bool	reflect_file_has(const FileProto *f, const char *sym);
static bool	reflect_file_find(const char *name, const char *sym, size_t *out);
static void	reflect_add(struct reflect_files *fs, size_t f);
static size_t	reflect_list(char names[][REFLECT_MAX_NAME], size_t max);
struct reflect_reply;
static void	reflect_reply_list(struct reflect_reply *a);
static void	reflect_reply_files(struct reflect_reply *a, size_t f);
static void	reflect_reply_error(struct reflect_reply *a, const char *why);
static void	reflect_fill(struct reflect_reply *a,
		    const Grpc__Reflection__V1__ServerReflectionRequest *q);

/* Unpacks the embedded set and packs each file; false out of memory. */
static bool
reflect_load(void)
{
	Google__Protobuf__FileDescriptorSet *set;
	size_t i = 0;

	if (reflect_set != NULL)
		return true;
	set = google__protobuf__file_descriptor_set__unpack(NULL, reflect_descriptor_set_len,
	    reflect_descriptor_set);
	if (set == NULL)
		return false;
	reflect_bin = calloc(set->n_file + 1, sizeof(*reflect_bin));
	for (; reflect_bin != NULL && i < set->n_file; i++) {
		reflect_bin[i].len = protobuf_c_message_get_packed_size(&set->file[i]->base);
		reflect_bin[i].data = malloc(reflect_bin[i].len + 1);
		if (reflect_bin[i].data == NULL)
			break;
		protobuf_c_message_pack(&set->file[i]->base, reflect_bin[i].data);
	}
	if (reflect_bin == NULL || i < set->n_file) {
		while (reflect_bin != NULL && i-- > 0)
			free(reflect_bin[i].data);
		free(reflect_bin);
		reflect_bin = NULL;
		google__protobuf__file_descriptor_set__free_unpacked(set, NULL);
		return false;
	}
	reflect_set = set;
	return true;
}

/* name (a descriptor's, maybe absent) is the len bytes of sym. */
static bool
reflect_eq(const char *name, const char *sym, size_t len)
{
	return name != NULL && strlen(name) == len && memcmp(name, sym, len) == 0;
}

/* The enum, or one of its values (in the enum's own scope, as protobuf has it). */
static bool
reflect_enum_has(const EnumProto *e, const char *sym, size_t len)
{
	if (reflect_eq(e->name, sym, len))
		return true;
	for (size_t i = 0; i < e->n_value; i++)
		if (reflect_eq(e->value[i]->name, sym, len))
			return true;
	return false;
}

/* The message, or a field, extension, oneof, nested message or enum in it. */
static bool
reflect_message_has(const MsgProto *m, const char *sym, size_t len)
{
	size_t i, n = m->name != NULL ? strlen(m->name) : 0;

	if (n == 0 || n > len || memcmp(m->name, sym, n) != 0 || (n < len && sym[n] != '.'))
		return false;
	if (n == len)
		return true;
	sym += n + 1;
	len -= n + 1;
	for (i = 0; i < m->n_field; i++)
		if (reflect_eq(m->field[i]->name, sym, len))
			return true;
	for (i = 0; i < m->n_extension; i++)
		if (reflect_eq(m->extension[i]->name, sym, len))
			return true;
	for (i = 0; i < m->n_oneof_decl; i++)
		if (reflect_eq(m->oneof_decl[i]->name, sym, len))
			return true;
	for (i = 0; i < m->n_nested_type; i++)
		if (reflect_message_has(m->nested_type[i], sym, len))
			return true;
	for (i = 0; i < m->n_enum_type; i++)
		if (reflect_enum_has(m->enum_type[i], sym, len))
			return true;
	return false;
}

/* The service, or one of its methods. */
static bool
reflect_service_has(const SvcProto *s, const char *sym, size_t len)
{
	size_t n = s->name != NULL ? strlen(s->name) : 0;

	if (n == 0 || n > len || memcmp(s->name, sym, n) != 0 || (n < len && sym[n] != '.'))
		return false;
	if (n == len)
		return true;
	for (size_t i = 0; i < s->n_method; i++)
		if (reflect_eq(s->method[i]->name, sym + n + 1, len - n - 1))
			return true;
	return false;
}

/* File f declares the fully-qualified symbol sym. */
static bool
reflect_file_has(const FileProto *f, const char *sym)
{
	size_t i, len = strlen(sym), pkg = f->package != NULL ? strlen(f->package) : 0;

	if (pkg > 0) {
		if (len <= pkg + 1 || memcmp(sym, f->package, pkg) != 0 || sym[pkg] != '.')
			return false;
		sym += pkg + 1;
		len -= pkg + 1;
	}
	for (i = 0; i < f->n_message_type; i++)
		if (reflect_message_has(f->message_type[i], sym, len))
			return true;
	for (i = 0; i < f->n_enum_type; i++)
		if (reflect_enum_has(f->enum_type[i], sym, len))
			return true;
	for (i = 0; i < f->n_service; i++)
		if (reflect_service_has(f->service[i], sym, len))
			return true;
	for (i = 0; i < f->n_extension; i++)
		if (reflect_eq(f->extension[i]->name, sym, len))
			return true;
	return false;
}

/* The embedded file that declares sym, or (sym NULL) of that name. */
static bool
reflect_file_find(const char *name, const char *sym, size_t *out)
{
	for (*out = 0; *out < reflect_set->n_file; (*out)++)
		if (sym != NULL ? reflect_file_has(reflect_set->file[*out], sym) :
		    reflect_eq(reflect_set->file[*out]->name, name, strlen(name)))
			return true;
	return false;
}

/* f into the answer unless there already, then the files it imports. */
static void
reflect_add(struct reflect_files *fs, size_t f)
{
	const FileProto *fp = reflect_set->file[f];
	size_t i, dep;

	for (i = 0; i < fs->n; i++)
		if (fs->f[i] == f)
			return;
	if (fs->n == REFLECT_MAX_FILES)
		return;
	fs->f[fs->n++] = f;
	for (i = 0; i < fp->n_dependency; i++)
		if (reflect_file_find(fp->dependency[i], NULL, &dep))
			reflect_add(fs, dep);
}

/* Every service's full name (<package>.<service>), in the files' order. */
static size_t
reflect_list(char names[][REFLECT_MAX_NAME], size_t max)
{
	const FileProto *f;
	size_t i, j, k = 0;
	int n;

	for (i = 0; i < reflect_set->n_file; i++) {
		f = reflect_set->file[i];
		for (j = 0; k < max && j < f->n_service; j++) {
			n = snprintf(names[k], REFLECT_MAX_NAME, "%s.%s",
			    f->package != NULL ? f->package : "",
			    f->service[j]->name != NULL ? f->service[j]->name : "");
			if (n >= 0 && n < REFLECT_MAX_NAME)
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
reflect_reply_files(struct reflect_reply *a, size_t f)
{
	reflect_add(&a->fs, f);
	for (size_t i = 0; i < a->fs.n; i++)
		a->bin[i] = reflect_bin[a->fs.f[i]];
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
	const char *why = "";
	size_t f;

	switch (q->message_request_case) {
	case GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_LIST_SERVICES:
		reflect_reply_list(a);
		return;
	case GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_BY_FILENAME:
		if (reflect_file_find(q->file_by_filename, NULL, &f)) {
			reflect_reply_files(a, f);
			return;
		}
		why = "file not found";
		break;
	case GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_SYMBOL:
		if (reflect_file_find(NULL, q->file_containing_symbol, &f)) {
			reflect_reply_files(a, f);
			return;
		}
		why = "symbol not found";
		break;
	case GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_ALL_EXTENSION_NUMBERS_OF_TYPE:
		if (reflect_file_find(NULL, q->all_extension_numbers_of_type, &f)) {
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
	a = reflect_load() ? calloc(1, sizeof(*a)) : NULL;
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
