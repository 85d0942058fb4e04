/* opendml: symbol visibility of the public C functions. */
#ifndef OPENDML_EXPORT_H
#define OPENDML_EXPORT_H

#if defined(_WIN32)
#if defined(OPENDML_BUILDING_LIBRARY)
#define OPENDML_API __declspec(dllexport)
#else
#define OPENDML_API __declspec(dllimport)
#endif
#else
#define OPENDML_API __attribute__((visibility("default")))
#endif

#endif /* OPENDML_EXPORT_H */
