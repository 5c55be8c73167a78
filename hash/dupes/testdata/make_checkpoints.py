# Writes the checkpoints TestCheckpointContentIsNeverLost reads, with the real writer (torch.save),
# small and fixed: run with Debian's python3-torch from this folder.
import collections, torch
torch.manual_seed(0)
lin = torch.nn.Linear(2, 2)
sd = lin.state_dict()  # an OrderedDict whose _metadata torch.save writes with BUILD
torch.save(sd, "state_dict_metadata.pt")
plain = collections.OrderedDict((k, v.clone()) for k, v in sd.items())  # no _metadata
torch.save(plain, "state_dict_plain.pt")
opt = torch.optim.Adam(lin.parameters())
lin(torch.ones(1, 2)).sum().backward()
opt.step()
torch.save({"epoch": 3, "global_step": 120, "pytorch-lightning_version": "2.1.0",
            "state_dict": plain, "hyper_parameters": {"lr": 0.001, "hidden": 2},
            "optimizer_states": [opt.state_dict()], "lr_schedulers": []}, "lightning.ckpt")
