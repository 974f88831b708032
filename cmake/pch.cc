// The one source file of the targets that hold the shared precompiled headers
// (cmake/paceline.cmake, paceline_precompile_headers).
