# The core's layers, lowest first, and the layers each one uses: one library per layer
# (CMakeLists.txt links them so) and the include rule cmake/check_layers.cmake enforces (a file
# of a layer includes its own layer, the layers it uses, their uses, and so on down; nothing
# above). A layer `a_b` is the folder src/a/b. runtime/include, the headers generated kernels
# include, is below every layer and includes none.
# Each folder src/codegen/<t>/ is a target's layer codegen_<t>: it uses codegen, the registry
# (backends) uses it, and targets do not use each other. A new target adds no line here.
file(GLOB af_target_dirs LIST_DIRECTORIES true RELATIVE ${CMAKE_CURRENT_LIST_DIR}/../src/codegen
     ${CMAKE_CURRENT_LIST_DIR}/../src/codegen/*)
set(AF_TARGET_LAYERS "")
foreach(dir IN LISTS af_target_dirs)
  if(IS_DIRECTORY ${CMAKE_CURRENT_LIST_DIR}/../src/codegen/${dir})
    list(APPEND AF_TARGET_LAYERS codegen_${dir})
    set(AF_USES_codegen_${dir} codegen)
  endif()
endforeach()
list(SORT AF_TARGET_LAYERS)

set(AF_LAYERS support aten sym graph ascir inductor target schedule fusion codegen ${AF_TARGET_LAYERS} jit
    runtime runtime_cuda backends pipeline)
set(AF_USES_support "")
set(AF_USES_aten "")               # the ATen op table: what the torch frontend maps to Graph IR
set(AF_USES_sym support)
set(AF_USES_graph sym)
set(AF_USES_ascir graph)
set(AF_USES_inductor ascir)          # what Inductor's loop-body ops compute as AscIR
set(AF_USES_target support)
set(AF_USES_schedule ascir target)  # one kernel's loop nest and its TilingCases
set(AF_USES_fusion schedule)        # CanFuse asks the schedule for a layout
set(AF_USES_codegen schedule)       # what every target's printer shares
set(AF_USES_jit target)            # the host CPU keys -march=native builds
set(AF_USES_runtime target)
set(AF_USES_runtime_cuda jit)       # the cuda target's launcher: NVRTC and the driver, dlopen'ed
set(AF_USES_backends ${AF_TARGET_LAYERS})  # the registry: one line per target
set(AF_USES_pipeline backends fusion jit)

# AF_REACH_<layer>: the layer and every layer below it that it uses, directly or not.
foreach(layer IN LISTS AF_LAYERS)
  set(reach ${layer})
  foreach(used IN LISTS AF_USES_${layer})
    list(APPEND reach ${AF_REACH_${used}})
  endforeach()
  list(REMOVE_DUPLICATES reach)
  set(AF_REACH_${layer} ${reach})
endforeach()

# The layer of a path under src/ ("" for runtime/include and anything not in a layer).
function(af_layer_of path out)
  set(layer "")
  if(NOT path MATCHES "^runtime/include/")
    string(REGEX MATCH "^[a-z]+/[a-z]+/" two "${path}")
    string(REGEX MATCH "^[a-z]+/" one "${path}")
    string(REGEX REPLACE "/$" "" two "${two}")
    string(REGEX REPLACE "/$" "" one "${one}")
    string(REPLACE "/" "_" two "${two}")
    if(two AND two IN_LIST AF_LAYERS)
      set(layer ${two})
    elseif(one AND one IN_LIST AF_LAYERS)
      set(layer ${one})
    endif()
  endif()
  set(${out} "${layer}" PARENT_SCOPE)
endfunction()
