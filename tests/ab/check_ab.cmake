# Runs `flashproof ab ...` (COMMAND, through run_ab.cmake) and checks its report in OUT.
include(${CMAKE_CURRENT_LIST_DIR}/run_ab.cmake)
foreach(f ab.txt ab.json on/evidence.log off/evidence.log off/block-1/timed.log on/block-1/timed.log on/block-4/timed.log off/block-4/timed.log on/sustained/sustained.log)
  if(NOT EXISTS ${OUT}/${f})
    message(FATAL_ERROR "missing ${OUT}/${f}")
  endif()
endforeach()
file(READ ${OUT}/ab.txt text)
foreach(pattern
    "## Decision"
    "arm on  \\(on\\):   active[^\n]*, as required"
    "arm off \\(off\\):  not active[^\n]*, as required"
    # every pair of blocks balanced, its order at random: at least the first look's two pairs
    "plan: blocks of one fresh launch per arm, in pairs AB BA or BA AB at random \\((off, on, on, off|on, off, off, on), (off, on, on, off|on, off, off, on)[,)]"
    "blocks: [0-9]+ \\("
    # from the second block both arms up at once, their requests in turn (the tiny model fits twice)
    "\nlaunches interleaved from block 2: both up at once, their requests in turn\n"
    "gate ttft_ms +(pass|fail|undecided) +ttft_ms: [a-z ]+: flag on (worse|better) by [-+][0-9.]+% \\(95% CI"
    "## Same system\\?"
    "ttft_ms_p95 +off [0-9.]+ +on [0-9.]+ +on-off"
    "arm on: [0-9]+ requests in [0-9.]+ s at concurrency 2"
    # the runtime's own gauges over the sustained phase (--metrics), its token counters against ours
    "sustained phase: the runtime's gauges at their peak \\([0-9]+ scrapes of /metrics\\): requests deferred \\(queued\\) [0-9]+, requests processing [0-9]+"
    "sustained phase: tokens, the runtime's counters against flashproof's own: prompt [0-9]+ [^\n]* against [0-9]+, output [0-9]+ against [0-9]+\n"
    "arm off timed: +[^\n]*-fa off")
  if(NOT text MATCHES "${pattern}")
    message(FATAL_ERROR "ab.txt lacks /${pattern}/; files kept in ${OUT}\n${text}")
  endif()
endforeach()
file(READ ${OUT}/ab.json json)
string(JSON exit_code GET "${json}" decision exit_code)
if(NOT exit_code EQUAL rc)
  message(FATAL_ERROR "ab.json decision.exit_code ${exit_code} but the command exited ${rc}")
endif()
message(STATUS "flashproof ab exited ${rc}; report ${OUT}/ab.txt")
