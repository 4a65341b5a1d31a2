# CalhostCitedSources.cmake: installs the source files that installed
# documentation cites (issue 22 item 6: installed docs stand alone), under
# <datadir>/doc/calhost/source/ at their path in the sources, each with the
# package whose documents cite it. tests/packages/installed_docs.sh fails
# when an installed document, header or `calhost help` cites a source path
# that is neither installed in its own right nor listed here.
set(_src_doc "${CMAKE_INSTALL_DATADIR}/doc/calhost/source")
function(calhost_install_cited component)
  foreach(_p IN LISTS ARGN)
    get_filename_component(_dir "${_p}" DIRECTORY)
    if(IS_DIRECTORY "${CMAKE_SOURCE_DIR}/${_p}")
      install(DIRECTORY "${CMAKE_SOURCE_DIR}/${_p}/" DESTINATION "${_src_doc}/${_p}"
              COMPONENT ${component})
    else()
      install(FILES "${CMAKE_SOURCE_DIR}/${_p}" DESTINATION "${_src_doc}/${_dir}"
              COMPONENT ${component})
    endif()
  endforeach()
endfunction()

# cited by the configuration reference (share/calhost/README.md) and the fleet guide
calhost_install_cited(calhost
  host/config/values.c host/processor/processor.h host/search/README.md host/calibrate/shard.h
  tests/fleet/measure.sh tests/fleet/test_fleet_slurm.sh tests/fleet/test_shard.c
  host/model/README.md tests/model/make_models.py tests/cli/shipped_configs.sh
  host/config/config_keys.h)
# cited by the plugin guide (share/doc/calhost/plugin-sdk.md) and plugin.h
calhost_install_cited(plugin_dev
  plugins/example plugins/cpu_gemm/space.c plugins/clblast plugins/opencl_gemm tests/plugins/abi1
  plugins/cuda_gemm plugins/cublaslt plugins/common)
# cited by calstore.h
calhost_install_cited(calstore_dev host/store/README.md)
