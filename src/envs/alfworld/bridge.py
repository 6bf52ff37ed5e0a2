"""One ALFWorld game, played over JSON lines on stdin and stdout (one process per game).

    python bridge.py [--world FILE.py]

The bridge answers {"ready": true, "world": NAME} once it has started, then one line per request:

    {"op": "reset", "gamefile": PATH, "seed": N}  ->  {"observation": TEXT, "admissible": [ACTION, ...]}
    {"op": "step", "action": TEXT}                ->  {"observation", "admissible", "done": BOOL, "won": BOOL}
    {"op": "close"}                               ->  {"closed": true}, and the process ends

A request that fails is answered {"error": MESSAGE}. Only the protocol goes to stdout: anything
else the game prints is sent to stderr.

The game is ALFWorld's text world (`AlfredTWEnv`, from the `alfworld` package, with its data
under $ALFWORLD_DATA), restricted to the one game file. `--world FILE.py` plays a world of one's
own instead: FILE.py defines a class `World(gamefile, seed)` with `reset() -> (observation,
admissible)` and `step(action) -> (observation, admissible, done, won)`.
"""
import importlib.util
import json
import os
import sys
import traceback

SPLITS = {"/valid_seen/": "eval_in_distribution", "/valid_unseen/": "eval_out_of_distribution"}


def alfred_config(gamefile, max_steps):
    """AlfredTWEnv's settings for one game: every data path points at the game's own folder, so
    the environment finds that game alone instead of scanning a whole split."""
    data = os.environ.get("ALFWORLD_DATA", "")
    here = os.path.dirname(os.path.abspath(gamefile))
    return {
        "dataset": {"data_path": here, "eval_id_data_path": here, "eval_ood_data_path": here, "num_train_games": -1, "num_eval_games": -1},
        "logic": {"domain": os.path.join(data, "logic", "alfred.pddl"), "grammar": os.path.join(data, "logic", "alfred.twl2")},
        "env": {
            "type": "AlfredTWEnv",
            "regen_game_files": False,
            "domain_randomization": False,
            "task_types": [1, 2, 3, 4, 5, 6],
            "expert_timeout_steps": 150,
            "expert_type": "handcoded",
            "goal_desc_human_anns_prob": 0.0,
        },
        "general": {"random_seed": 42, "use_cuda": False, "training_method": "dagger"},
        "dagger": {"training": {"max_nb_steps_per_episode": max_steps}},
        "rl": {"training": {"max_nb_steps_per_episode": max_steps}},
    }


class AlfredWorld:
    """ALFWorld's TextWorld environment, batch of one."""

    name = "AlfredTWEnv"

    def __init__(self, gamefile, seed, max_steps=50):
        from alfworld.agents.environment import get_environment

        split = next((name for marker, name in SPLITS.items() if marker in gamefile.replace(os.sep, "/")), "train")
        config = alfred_config(gamefile, max_steps)
        base = get_environment(config["env"]["type"])(config, train_eval=split)
        base.game_files = [gamefile]
        base.num_games = 1
        self.env = base.init_env(batch_size=1)
        self.env.seed(seed)

    def reset(self):
        obs, infos = self.env.reset()
        return obs[0], list(infos["admissible_commands"][0])

    def step(self, action):
        obs, _scores, dones, infos = self.env.step([action])
        return obs[0], list(infos["admissible_commands"][0]), bool(dones[0]), bool(infos["won"][0])


def world_from_file(path):
    spec = importlib.util.spec_from_file_location("skillopt_world", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load a world from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "World"):
        raise RuntimeError(f"{path} defines no class World")
    return module.World


def serve(make_world, name, protocol):
    def send(message):
        protocol.write(json.dumps(message) + "\n")
        protocol.flush()

    send({"ready": True, "world": name})
    world = None
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            op = request.get("op")
            if op == "reset":
                world = make_world(str(request["gamefile"]), int(request.get("seed", 0)))
                observation, admissible = world.reset()
                send({"observation": observation, "admissible": list(admissible)})
            elif op == "step":
                if world is None:
                    raise RuntimeError("step before reset")
                observation, admissible, done, won = world.step(str(request["action"]))
                send({"observation": observation, "admissible": list(admissible), "done": bool(done), "won": bool(won)})
            elif op == "close":
                send({"closed": True})
                return 0
            else:
                send({"error": f"unknown op {op!r}"})
        except Exception as error:  # noqa: BLE001
            traceback.print_exc()
            send({"error": f"{type(error).__name__}: {error}"})
    return 0


def main(argv):
    # Keep the protocol on its own descriptor; whatever else writes to stdout (the game's own
    # prints, C libraries) lands on stderr.
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    if "--world" in argv:
        path = argv[argv.index("--world") + 1]
        try:
            make_world = world_from_file(path)
        except Exception as error:  # noqa: BLE001
            protocol.write(json.dumps({"error": f"{type(error).__name__}: {error}"}) + "\n")
            protocol.flush()
            return 1
        return serve(make_world, os.path.basename(path), protocol)
    max_steps = int(os.environ.get("SKILLOPT_ALFWORLD_MAX_STEPS", "50"))
    return serve(lambda gamefile, seed: AlfredWorld(gamefile, seed, max_steps), AlfredWorld.name, protocol)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
