# `make deb`: the Debian package, built by CPack's DEB generator from the install rules below
# (docs/operations.md, "Install on Debian", says why CPack rather than a debian/ directory).
# One package, `paceline`: the binary, the master's and the agent's systemd units, their
# configuration files (conffiles), the man pages and the bash completion generated from the
# command line itself, the changelog and copyright. Its dependencies come from the binary's
# shared libraries (dpkg-shlibdeps).

set(_deploy ${CMAKE_SOURCE_DIR}/deploy)
set(_ref ${CMAKE_BINARY_DIR}/reference)

# The man pages and the completion, from the binary just built (`paceline man`, `paceline
# completion bash`), gzip'd without timestamps as Debian wants.
add_custom_command(
  OUTPUT ${_ref}/stamp
  COMMAND ${CMAKE_SOURCE_DIR}/scripts/gen-reference.sh $<TARGET_FILE:paceline>
          ${_deploy}/debian/changelog ${_ref}
  DEPENDS paceline paceline-task-wrapper ${_deploy}/debian/changelog ${CMAKE_SOURCE_DIR}/scripts/gen-reference.sh
  COMMENT "Generating the man pages and the bash completion")
add_custom_target(paceline_reference ALL DEPENDS ${_ref}/stamp)

install(TARGETS paceline paceline-task-wrapper RUNTIME DESTINATION bin)
install(DIRECTORY ${_ref}/man1 DESTINATION share/man)
install(FILES ${_ref}/completions/paceline DESTINATION share/bash-completion/completions)
install(FILES ${_deploy}/debian/copyright ${_ref}/changelog.gz DESTINATION share/doc/paceline)
install(FILES ${_deploy}/debian/lintian-overrides DESTINATION share/lintian/overrides
        RENAME paceline)
install(FILES ${_deploy}/systemd/paceline-master.service ${_deploy}/systemd/paceline-agent.service
        DESTINATION /lib/systemd/system)
install(FILES ${_deploy}/etc/master.yaml ${_deploy}/etc/agent.yaml DESTINATION /etc/paceline)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME paceline)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Paceline developers <packages@paceline.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "cluster scheduler for batch jobs, services and daemons")
# The extended description (CPack indents each line and writes an empty one as " .").
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "Paceline schedules batch jobs, long-running and stateful services and
per-host daemons on a fleet of hosts: hierarchical resource pools that share
capacity elastically, fair-share entitlement, admission control, preemption,
gangs, backfill and GPUs, with an agent that runs the tasks in cgroups and
containers, a gRPC and JSON API, a command line and a web UI.

This package holds the paceline binary (master, agent and command line), the
systemd units paceline-master.service and paceline-agent.service, and their
configuration files in /etc/paceline.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "crun")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${_deploy}/debian/postinst ${_deploy}/debian/prerm ${_deploy}/debian/postrm
    ${_deploy}/debian/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_STRIP_FILES TRUE)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_WARN_ON_ABSOLUTE_INSTALL_DESTINATION OFF)
include(CPack)
